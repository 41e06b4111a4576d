"""Imported once by the workers' forkserver: every worker then forks with torch, the tracing
machinery and the run's opset version already loaded, so a fresh worker (after a crash or a
timeout) starts in well under a second instead of paying those imports per case."""
import os

import torch._dynamo  # noqa: F401
import torch._dynamo.convert_frame  # noqa: F401
import torch._functorch.aot_autograd  # noqa: F401
import torch.export  # noqa: F401
import torch.fx.experimental.symbolic_shapes  # noqa: F401

from opspec.conform import runner

runner.cached_opset(os.environ.get(runner.WARM_OPSET) or None)
