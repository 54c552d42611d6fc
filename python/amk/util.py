"""The few helpers of kernel_tuner.util that Kernel Tuner's examples import, so that
`from kernel_tuner.util import X` rewritten to `from amk.util import X` runs."""


def get_config_string(params, keys=None, units=None):
    """"block_size_x=128, tile=2, time=0.512ms": a result or config as Kernel Tuner prints it
    (keys: only these, in this order; units: {key: unit} appended to the values)."""
    units = units or {}
    keys = keys if keys is not None else list(params)
    return ", ".join("%s=%s%s" % (k, params[k], units.get(k, "")) for k in keys if k in params)
