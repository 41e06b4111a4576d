"""What a backend is (:class:`Declaration`) and what one resolved run of it holds (:class:`Backend`).

A declaration is data plus a few callables: how the backend builds a program,
how it reports who executed each op (its evidence kind), its front-end layers
for attribution, the optional extra and packages it needs, and where its
default expectations and manifest live. Nothing outside this package tests a
backend's name: it reads the declaration.
"""
from __future__ import annotations

import importlib
import importlib.util
import importlib.metadata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager

from opspec.conform import evidence, expectations, lowering

# evidence kinds: "observed" (hook, partitions or generated code, per case), a fact of what the backend is
# ("reference", "whole-program"), or "none": nothing can tell who ran an op (its right answers stay unverified)
EVIDENCE_KINDS = ("observed", "reference", "whole-program", "none")


class UnknownBackend(LookupError):
    """The name is neither declared, registered with torch, nor an importable ``module:callable``."""


class MissingExtra(UnknownBackend):
    """A declared backend whose optional package is not installed: one line naming the extra to install."""


class CompileError(Exception):
    """The backend failed while building the program (tracing, lowering, code generation)."""


@dataclass(frozen=True)
class GapsPage:
    """A site page for the backend's own developers: the core ops its manifest says it does not lower yet,
    ranked by how many zoo models need each, with the repro that showed each fallback. Only the wording and
    where its inputs lie are the backend's: :mod:`opspec.reports.site.backend_pages` builds every such page."""

    page: str  # the page's file, e.g. xla.md
    title: str
    heading: str
    # the paragraph above the table; {measured_with}, {devices} and {models} (how many zoo models) are filled in
    intro: str
    missing: str  # what the page says when the checkout has no manifest for the backend
    coverage: Path  # the zoo comparison: which models need each op (``models[].flagged``), checkout-relative
    report: Path  # the conformance report whose pytorch and partial records carry the repros, checkout-relative
    at_defaults: str = ""  # the paragraph above the ops lowered at their default arguments only
    repros: str = ""  # the paragraph above the repros


@dataclass(frozen=True)
class Declaration:
    """One backend as opspec knows it. ``build(declaration, opset, dynamic)`` returns a :class:`Backend`."""

    name: str
    build: Callable[["Declaration", Any, bool], "Backend"] = field(repr=False)
    evidence: str = "observed"  # one of EVIDENCE_KINDS
    evidence_note: str = ""  # what a pass means (reference, whole-program), or why nothing can tell (none)
    # the execution levels: what computes an op for a pass (the delegate, the compiler's kernels), and the
    # backend's own runtime that runs what the target does not take ("" where there is no such level)
    target: str = "the backend"
    runtime: str = ""
    # the front-end layers, outermost first, as (layer, reference backend) pairs: see attribution.stages
    stages: Callable[["Backend"], list] | None = field(default=None, repr=False)
    # (party, stage, reason) when no layer reproduces a failure: for backends that are all front end
    unexplained: Callable[[bool], tuple[str, str, str]] | None = field(default=None, repr=False)
    extra: str = ""  # the optional extra that installs what ``requires`` names
    requires: tuple[str, ...] = ()  # modules that must import
    packages: tuple[str, ...] = ()  # distributions named in the version
    install: str = ""  # how to install the extra, where constraints.txt's torch cannot hold it
    # context managers entered while the backend compiles a graph (inductor: its generated code)
    watchers: tuple[Callable[[], ContextManager], ...] = field(default=(), repr=False)
    build_note: Callable[[], str] | None = field(default=None, repr=False)  # how a watcher changes what it builds
    expectations: Path | None = None  # default expectations file (None: conformance/expectations/NAME.yaml if any)
    manifest: Path | None = None  # lowering manifest (None: the bundled conformance/backends/NAME.yaml if any)
    lowering_meaning: str = ""  # what "lowered" means for it, so a coverage figure is read for what it is (site)
    lowering_figure: bool = True  # False where a lowering figure would say nothing (the kernels are PyTorch's)
    # op -> the library kernel its own lowering may call for the op, as its program names it: such a call is a
    # library call (lowered, counted apart), not a fallback; written into its manifest (library_kernels)
    library_kernels: Callable[[], dict[str, str]] | None = field(default=None, repr=False)
    # the most elements one input tensor may hold (None: no limit); a case's accuracy program runs only within it
    largest_input: int | None = None
    site_page: GapsPage | None = None  # a page of the site for the backend's developers (see GapsPage)

    def __post_init__(self) -> None:
        if self.evidence not in EVIDENCE_KINDS:
            raise ValueError(f"backend {self.name}: evidence {self.evidence!r} is not one of {', '.join(EVIDENCE_KINDS)}")

    def check_extra(self, *, installed_only: bool = False) -> None:
        """MissingExtra, one line naming the extra, when a module the backend needs does not import
        (``installed_only``: when its package is not installed at all, found without importing it, as a run's
        parent process asks before it starts workers that would import it)."""
        for module in self.requires:
            try:
                if not installed_only:
                    importlib.import_module(module)
                elif importlib.util.find_spec(module.partition(".")[0]) is None:
                    raise ModuleNotFoundError(f"No module named {module.partition('.')[0]!r}")
            except ImportError as err:
                install = self.install or (f"pip install 'opspec[{self.extra}]' -c constraints.txt" if self.extra
                                           else "install it")
                what = f"the {self.extra} extra" if self.extra else f"the package providing {module}"
                raise MissingExtra(f"backend {self.name} needs {what}: {install} ({err})") from None

    def static_evidence(self) -> evidence.Evidence | None:
        return evidence.static(self.evidence, self.evidence_note)

    def expectations_path(self) -> Path | None:
        return self.expectations if self.expectations is not None else expectations.default_path(self.name)

    def manifest_path(self) -> Path | None:
        return self.manifest if self.manifest is not None else lowering.manifest_for(self.name)


@dataclass
class Backend:
    """One backend resolved for a run, with what it was handed and how often it compiled."""

    name: str
    compile_fn: Callable[["Backend", Callable, list], Callable] = field(repr=False)
    version: str = ""
    dynamic: bool = True
    compiles: int = 0
    handed: set[str] = field(default_factory=set)
    front_end: list[str] = field(default_factory=list)  # front-end layers seen while compiling (aot_autograd)
    duck_shapes: bool = True
    package: str = ""  # the distribution the backend comes from
    delegated: set[str] = field(default_factory=set)  # ops a partitioner handed to an inner delegate (XNNPACK)
    inner: Callable | None = field(default=None, repr=False)  # the torch.compile backend callable
    table: dict = field(default_factory=dict, repr=False)  # export: the opset's decomposition table
    declaration: Declaration | None = field(default=None, repr=False)

    def compile(self, fn: Callable, example_inputs: list) -> Callable:
        """A callable equivalent to ``fn`` over tensors like ``example_inputs``, built by the backend.

        Backends that compile lazily (``torch.compile``) raise CompileError at the first call.
        """
        return self.compile_fn(self, fn, example_inputs)

    def describe(self) -> dict[str, str]:
        described = {"name": self.name, "version": self.version}
        if self.package:
            described["package"] = self.package
        if self.declaration is not None:  # the execution levels a record's ``executed`` refers to
            described["target"] = self.declaration.target
            if self.declaration.runtime:
                described["runtime"] = self.declaration.runtime
            if self.declaration.build_note is not None:
                described["build"] = self.declaration.build_note()
        return described

    def static_evidence(self) -> evidence.Evidence | None:
        return self.declaration.static_evidence() if self.declaration is not None else None


def version_of(*distributions: str) -> str:
    """``"name version, ..."`` for the installed distributions among ``distributions``."""
    found = []
    for name in distributions:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(found)


def torch_version() -> str:
    import torch

    return f"torch {torch.__version__}"


def versioned(*distributions: str) -> str:
    """The version string of a backend from ``distributions``, with torch's after it."""
    own = version_of(*distributions)
    return f"{own}, {torch_version()}" if own else torch_version()
