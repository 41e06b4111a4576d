"""Backend manifests: which ops of an opset version a backend lowers, and which it hands back.

A manifest is ``conformance/backends/NAME.yaml`` (schema ``backend_manifest.schema.json``).
The lists are measured from the backend, not written by hand: see
``tools/measure_lowering.py``. This module reads and checks them; it needs no torch.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

from opspec.spec import load, resources, yamlio
from opspec.spec.load import Finding, LoadedFile, OpsetError
from opspec.spec.model import Opset
from opspec.spec.yamlio import Mark

SCHEMA = "backend_manifest.schema.json"
NONE = "none"  # --backend none: check against the opset only

# What ran instead of the backend's own code: one class per way, named and explained the same way in the
# manifests, the reports' lowering sections, `opspec coverage` and the site. kind -> (label, what it means).
FALLBACK_KINDS = {
    "aten-kernel": ("ATen kernel", "handed back to PyTorch: the op's ATen kernel ran instead of code from the backend"),
    "partial": ("partly PyTorch", "the backend computed part of the op, PyTorch kernels ran the rest"),
    "partition": ("outside the partitions", "the op stayed in the top-level graph the backend's partitioner "
                  "left to PyTorch, so PyTorch ran it"),
    "unsupported": ("unsupported", "the backend cannot compile or export the op, and nothing runs it instead"),
}
# A lowering that calls a library kernel (a GEMM or convolution library) is the backend's own choice, not a
# hand-back: the op is lowered, counted apart from generated code. The backend's manifest lists the ops it can
# lower so (``library_kernels``); its declaration's lowering_meaning names the library.
LIBRARY = ("library call", "the backend's own lowering calls a library kernel for the op instead of generating "
           "code for it (a GEMM or convolution library): lowered, counted apart from generated code")
# how far from the backend's own generated code each status is: a call in several dtypes gets the farthest
STATUS_RANK = {"lowered": 0, "library": 1, "fallback": 2, "unsupported": 2, "undeclared": 2}


@dataclass(frozen=True)
class BackendManifest:
    backend: str
    opset: str
    measured_with: str
    lowered: Mapping[str, str] = field(default_factory=dict)  # op -> note ("" when none)
    fallback: Mapping[str, str] = field(default_factory=dict)  # op -> reason ("" when none)
    unsupported: Mapping[str, str] = field(default_factory=dict)  # op -> reason: the backend cannot take it at all
    description: str = ""
    path: str = ""
    duck_shapes: bool = True  # compile option: torch's default unless the backend asks otherwise
    # lowered ops whose generated code still calls the ATen kernel on some devices: op -> {device: reason}
    fallback_on: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # of those, the ones that fell back in some dtypes only: op -> {device: dtypes}; the other dtypes are lowered there
    fallback_dtypes: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    # fallback ops seen falling back in some dtypes only (the others ran in the backend): op -> dtypes
    fallback_only_in: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the measuring rule's note kept after a fallback's reason (``fallback`` holds "reason; note"): op -> note
    fallback_notes: Mapping[str, str] = field(default_factory=dict)
    devices: tuple[str, ...] = ()  # devices the per-device facts were measured on
    evidence: tuple[str, ...] = ()  # the conformance reports whose execution evidence decided the ops they ran
    # ops the backend's lowering can hand to a library kernel: op -> the kernel as its program calls it
    library_kernels: Mapping[str, str] = field(default_factory=dict)
    # lowered ops whose lowering calls a library kernel on some devices: op -> {device: what it calls}
    library_on: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # of those, the ones that called it in some dtypes only: op -> {device: dtypes}; the others ran generated code
    library_dtypes: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    # lowered ops that fall back when a call sets one of these arguments away from its schema default: op -> names
    fallback_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    runs_model_code: bool = False  # the backend runs the model's own Python code eagerly (its host reads too)
    # with runs_model_code: non-core ops models call eagerly, measured on the backend: op -> (lowered|fallback, note)
    eager_ops: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "") -> "BackendManifest":
        lowered = [e for e in data["lowered"] if isinstance(e, dict)]
        fallback_dtypes = {e["op"]: {d: tuple(t) for d, t in e["fallback_dtypes"].items()} for e in lowered
                           if e.get("fallback_dtypes")}
        library_dtypes = {e["op"]: {d: tuple(t) for d, t in e["library_dtypes"].items()} for e in lowered
                          if e.get("library_dtypes")}
        fallback_only_in = {e["op"]: tuple(e["dtypes"]) for e in data["fallback"] if isinstance(e, dict) and e.get("dtypes")}
        return cls(
            backend=data["backend"],
            opset=data["opset"],
            measured_with=data["measured_with"],
            lowered={_op_of(e): _text_of(e, "note") for e in data["lowered"]},
            fallback={_op_of(e): _reason_of(e, fallback_only_in.get(_op_of(e), ())) for e in data["fallback"]},
            description=data.get("description", ""),
            path=path,
            duck_shapes=data.get("compile", {}).get("duck_shapes", True),
            fallback_on={e["op"]: {d: _bare(r, fallback_dtypes.get(e["op"], {}).get(d, ()))
                                   for d, r in e["fallback_on"].items()} for e in lowered if e.get("fallback_on")},
            fallback_dtypes=fallback_dtypes,
            fallback_only_in=fallback_only_in,
            fallback_notes={e["op"]: e["note"] for e in data["fallback"] if isinstance(e, dict) and e.get("note")
                            and e.get("reason")},
            devices=tuple(data.get("devices", ())),
            unsupported={_op_of(e): _reason_of(e) for e in data.get("unsupported", ())},
            evidence=tuple(data.get("evidence", ())),
            library_kernels=dict(data.get("library_kernels", {})),
            library_on={e["op"]: {d: _bare(r, library_dtypes.get(e["op"], {}).get(d, ()))
                                  for d, r in e["library_on"].items()} for e in lowered if e.get("library_on")},
            library_dtypes=library_dtypes,
            runs_model_code=data.get("runs_model_code", False),
            eager_ops={e["op"]: (e["status"], e["note"]) for e in data.get("eager_ops", ())},
            fallback_args={e["op"]: tuple(e["fallback_args"]) for e in lowered if e.get("fallback_args")},
        )

    def status(self, op: str, device: str | None = None, settings: Collection[str] | None = None,
               dtype: str | None = None) -> tuple[str, str]:
        """("lowered" | "library" | "fallback" | "unsupported" | "undeclared", note) for one op, on ``device`` when
        given.

        ``settings``: the arguments the calls in question set away from their schema defaults (a model's graph);
        None for calls that may set any (conform's drawn calls). An op lowered at its defaults that falls back
        when some arguments are set (``fallback_args``) is a fallback only for calls that set one of them.
        ``dtype``: the dtype of the calls in question; None for calls of any dtype. An op seen falling back (or
        calling a library kernel) in some dtypes only does so only for those, and the note names no other."""
        return self.status_over(op, device, None if dtype is None else (dtype,), settings)

    def status_over(self, op: str, device: str | None, dtypes: Collection[str] | None,
                    settings: Collection[str] | None = None) -> tuple[str, str]:
        """:meth:`status` for calls in several dtypes (None or empty: of any dtype): the status farthest from the
        backend's generated code that one of them has, its note naming those of ``dtypes`` it holds for."""
        asked = tuple(sorted(dtypes)) if dtypes else None
        if op in self.lowered:
            reason = self.fallback_on.get(op, {}).get(device) if device else None
            hit = _covered(self.fallback_dtypes.get(op, {}).get(device, ()), asked)
            if reason and hit is not None:
                return "fallback", f"on {device}: {reason}{_in(hit)}"
            args = self.fallback_args.get(op, ())
            named = [a for a in args if settings is None or a in settings]
            if named:
                which = " or ".join(named) if settings is None else ", ".join(named)
                return "fallback", f"{'when a call sets' if settings is None else 'the calls set'} {which}: {self.lowered[op]}"
            library = self.library_on.get(op, {}).get(device) if device else None
            hit = _covered(self.library_dtypes.get(op, {}).get(device, ()), asked)
            if library and hit is not None:
                return "library", f"on {device}: {library}{_in(hit)}"
            return "lowered", self.lowered[op]
        if op in self.fallback:
            hit = _covered(self.fallback_only_in.get(op, ()), asked)
            if hit is None:  # the calls' dtypes are among those the backend ran itself
                return "lowered", ""
            note = self.fallback_notes.get(op)
            reason = self.fallback[op].removesuffix(f"; {note}") if note else self.fallback[op]
            return "fallback", f"{reason}{_in(hit)}" + (f"; {note}" if note else "")
        if op in self.unsupported:
            return "unsupported", self.unsupported[op]
        return "undeclared", f"{self.backend} manifest does not list it"


def _covered(only_in: tuple[str, ...], asked: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Which of the ``asked`` dtypes a fact seen in ``only_in`` (empty: in every dtype) holds for: None when none
    does; () when it holds for all and names no dtype; the dtypes to name otherwise."""
    if not only_in:
        return ()
    hit = tuple(d for d in (asked or only_in) if d in only_in)
    return hit or None


def _in(dtypes: tuple[str, ...]) -> str:
    return f" in {', '.join(dtypes)}" if dtypes else ""


def _bare(reason: str, dtypes: tuple[str, ...]) -> str:
    """A reason without the dtypes it was written for: the note names those a question asks about."""
    return reason.removesuffix(_in(tuple(dtypes))) if dtypes else reason


def _op_of(entry: Any) -> str:
    return entry["op"] if isinstance(entry, dict) else entry


def _text_of(entry: Any, key: str) -> str:
    return entry.get(key, "") if isinstance(entry, dict) else ""


def _reason_of(entry: Any, dtypes: tuple[str, ...] = ()) -> str:
    """A fallback's reason (less the dtypes it names), with the measuring rule's note where the evidence wrote it."""
    return "; ".join(text for text in (_bare(_text_of(entry, "reason"), dtypes), _text_of(entry, "note")) if text)


backends_dir = resources.backends_dir


def known_backends(directory: Path | None = None) -> list[str]:
    directory = directory or backends_dir()
    return sorted(p.stem for p in directory.glob("*.yaml")) if directory.is_dir() else []


class UnknownBackend(LookupError):
    pass


def manifest_path(name_or_path: str, directory: Path | None = None) -> Path:
    """A bundled backend's manifest by name, or any manifest file by path."""
    directory = directory or backends_dir()
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or len(candidate.parts) > 1:
        if not candidate.is_file():
            raise UnknownBackend(f"no backend manifest at {candidate}")
        return candidate
    path = directory / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join([*known_backends(directory), NONE])
        raise UnknownBackend(f"no manifest for backend {name_or_path!r} (known: {known}; or give a path to a manifest)")
    return path


def read(path: Path) -> LoadedFile:
    return load.read(path, SCHEMA)


def load_manifest(path: Path) -> BackendManifest:
    """Parse and schema-check one manifest; raises OpsetError with every finding."""
    loaded = read(path)
    if loaded.findings:
        raise OpsetError(loaded.findings)
    return BackendManifest.from_dict(loaded.data, str(path))


def load_bundled() -> dict[str, BackendManifest]:
    """The bundled manifests that load cleanly, by backend (a broken one is reported by :func:`manifest_findings`)."""
    loaded = (read(path) for path in sorted(backends_dir().glob("*.yaml")))
    return {m.backend: m for m in (BackendManifest.from_dict(f.data, str(f.path)) for f in loaded
                                   if f.data is not None and not f.findings)}


def manifest_findings(root_dir: Path, opset_loader: Callable[[str], Opset],
                      known_ops: Collection[str] | None = None) -> list[Finding]:
    """Every problem in every ``*.yaml`` manifest under ``root_dir``.

    ``opset_loader(version)`` returns that opset version (``load.load_opset`` fits)
    and may raise OpsetError for an unknown version; each version is loaded once.
    A manifest may also list ops beyond the opset that real models carry; with
    ``known_ops`` (every aten op of the installed torch) those must exist there,
    without it (no torch) they are accepted as written.
    """
    opsets: dict[str, Opset | str] = {}

    def opset_for(version: str) -> Opset | str:
        if version not in opsets:
            try:
                opsets[version] = opset_loader(version)
            except OpsetError as err:
                opsets[version] = err.findings[0].message if err.findings else f"cannot load opset {version}"
        return opsets[version]

    findings: list[Finding] = []
    for path in sorted(Path(root_dir).glob("*.yaml")):
        loaded = read(path)
        findings += loaded.findings
        if loaded.data is not None and not loaded.findings:
            findings += _semantic_findings(loaded, opset_for, known_ops)
    return findings


def _semantic_findings(loaded: LoadedFile, opset_for: Callable[[str], Opset | str],
                       known_ops: Collection[str] | None) -> list[Finding]:
    data, path = loaded.data, loaded.path
    findings = []
    if data["backend"] != path.stem:
        findings.append(
            Finding(yamlio.mark_of(data, "backend"), f"backend {data['backend']!r} does not match the file name {path.name}")
        )
    opset = opset_for(data["opset"])
    if isinstance(opset, str):
        return findings + [Finding(yamlio.mark_of(data, "opset"), opset)]
    names = sorted(opset.core_names() | set(opset.rules_by_op) | set(opset.bookkeeping_by_name))
    measured = set(data.get("devices", ()))
    opset_schemas = {op.name: op.schema for op in opset.ops} | {op.name: op.schema for op in opset.bookkeeping}
    seen: dict[str, Mark] = {}
    for key in ("lowered", "fallback", "unsupported"):
        entries = data.get(key, ())
        for index, entry in enumerate(entries):
            op = _op_of(entry)
            mark = yamlio.mark_of(entries, index)
            if op not in names and known_ops is not None and op not in known_ops:
                close = difflib.get_close_matches(op, names, n=1, cutoff=0.8)  # only near-typos
                hint = f" (did you mean {close[0]}?)" if close else ""
                findings.append(Finding(mark, f"{op} is neither an op of opset {opset.version} nor of the installed torch{hint}"))
            for device in (entry.get("fallback_on") or {}) if isinstance(entry, dict) else ():
                if device not in measured:
                    findings.append(Finding(mark, f"{op}: fallback_on names device {device!r}, which the manifest's devices do not list"))
            schema = opset_schemas.get(op) or (known_ops.get(op) if isinstance(known_ops, Mapping) else None)
            named = entry.get("fallback_args", ()) if isinstance(entry, dict) else ()
            arguments = schema_arguments(schema) if schema else {}
            strangers = [a for a in named if schema and not (arguments.get(a) if ":" not in a
                                                             else a.split(":")[0] in arguments)]
            if strangers:
                findings.append(Finding(mark, f"{op}: fallback_args names {', '.join(strangers)}, not an argument "
                                              f"with a default (NAME) or an argument (NAME:DTYPE) of {schema}"))
            if op in seen:
                findings.append(Finding(mark, f"{op} is listed twice (first at line {seen[op].line})"))
            else:
                seen[op] = mark
    return findings


def schema_arguments(schema: str) -> dict[str, bool]:
    """Argument name -> whether it has a default, from a schema as torch prints it (no torch needed): the settings a
    call may leave out are those with one (``aten::addmm(Tensor self, ..., *, Scalar beta=1, Scalar alpha=1) -> ...``)."""
    inside = schema[schema.index("(") + 1:schema.rindex(") ->")]
    parts, depth, current = [], 0, []
    for char in inside:
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return {part.split("=")[0].split()[-1]: "=" in part for part in parts if part.strip() and part.strip() != "*"}
