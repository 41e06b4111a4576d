"""Imported once by the workers' forkserver: every worker then forks with torch, the tracing
machinery, the run's opset version, the special-case rows and the accuracy contracts already
loaded, so a fresh worker (after a crash or a timeout, or to confirm a failure) starts in well
under a second instead of paying those imports and about 3 s of parsing per case."""
import os

import torch._dynamo  # noqa: F401
import torch._dynamo.convert_frame  # noqa: F401
import torch._functorch.aot_autograd  # noqa: F401
import torch.export  # noqa: F401
import torch.fx.experimental.symbolic_shapes  # noqa: F401

from opspec.conform import runner, special_rows
from opspec.spec import accuracy

runner.cached_opset(os.environ.get(runner.WARM_OPSET) or None)
special_rows.all_rows()
accuracy.bundled_contracts()
