"""Wrong decompositions where semantics branch: the same faults the faulty backends carry
(``backend_faults/corpus.py``), written as decompositions of the op they get wrong.
Out-of-domain results, NaN through a select or a clamp, ties, arguments beyond their
typical range, extreme spreads, tiny magnitudes, signed zeros, integer semantics and
output dtypes."""
from backend_faults.corpus import (  # noqa: F401 - re-exported as the manifest's impl names
    _acos_clamped as acos_clamped,
    _argmax_nan_ignored as argmax_nan_ignored,
    _argmin_last as argmin_last,
    _clamp_fminmax as clamp_fminmax,
    _div_unsigned_zero as div_unsigned_zero,
    _hardtanh_min_wins as hardtanh_min_wins,
    _leaky_relu_max as leaky_relu_max,
    _log1p_naive as log1p_naive,
    _log_negative_inf as log_negative_inf,
    _log_softmax_unshifted as log_softmax_unshifted,
    _remainder_tensor_fmod as remainder_tensor_fmod,
    _right_shift_logical as right_shift_logical,
    _rsqrt_unsigned_zero as rsqrt_unsigned_zero,
    _sigmoid_int_keeps_dtype as sigmoid_int_keeps_dtype,
    _sinh_naive as sinh_naive,
    _sqrt_clamped as sqrt_clamped,
    _sum_keeps_dtype as sum_keeps_dtype,
    _var_one_pass as var_one_pass,
)
