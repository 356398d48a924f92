"""The course's reference functions (``posenc_solutions``) against Hugging Face transformers' own, run as HF's models
run them: the real config object (``LlamaConfig(..., rope_parameters=...)``), the function HF's model picks for it
(``ROPE_INIT_FUNCTIONS[rope_type](config)``), or the model's ``LlamaRotaryEmbedding`` and ``apply_rotary_pos_emb``.

Run with the test-only environment, ``make hf-env`` (transformers and CPU torch, pinned in
``tests/hf/requirements.lock``)::

    .venv-hf/bin/python tests/hf/compare.py            # one JSON object per comparison, a line each
    .venv-hf/bin/python tests/hf/compare.py --table    # the same, as a table
    .venv-hf/bin/python tests/hf/compare.py --perturb rope_scaling.llama3_inv_freq   # a deliberately wrong one

``tests/test_hf_agreement.py`` runs it and has a test per comparison. It exits 0 when every comparison is within its
tolerance, 1 otherwise; a comparison that raises is a failed row (``"error"``: its traceback), never a missing one.

Tolerances: HF computes in float32 (``torch.arange(0, dim, 2).float() / dim``, then ``base ** that``); the course
computes in float64. So each comparison allows float32's own rounding, in units of ``EPS32 = 2**-23`` (an ulp of
1.0 in float32), and nothing more:

- inverse frequencies: ``rtol = (ln(base) / 2 + 3) * EPS32``. HF rounds the exponent ``2t/d`` to float32 (an error
  of at most ``EPS32 / 2`` in it), which ``base ** exponent`` turns into a relative error of up to
  ``ln(base) * EPS32 / 2``; the power, the reciprocal, the division by the factor and YaRN's blend add a rounding
  each. ``base`` is the base HF raises (dynamic NTK's is the enlarged one). Llama 3.1's blend recomputes each
  pair's wavelength in float32 and can multiply that error by up to ``factor - 1`` in the pairs just inside its low
  band: the configurations here (the real ones among them) stay within the rule; one with factor 64 and
  ``high_freq_factor = 2 * low_freq_factor`` would not (about 21 EPS32 was seen).
- rotated queries and keys: per element, ``atol = EPS32 * (|x_t| + |x_(t+d/2)|) * (p theta_t (ln(1/theta_t) / 2 + 2)
  + 3)``. HF's angle ``p * theta_t`` is a float32 whose error grows with the angle (``theta_t``'s relative error
  from the exponent is ``ln(1/theta_t) * EPS32 / 2``, plus the rounding of the product and of ``theta_t``); a pair
  turned by an angle off by ``delta`` moves by at most ``(|x_t| + |x_(t+d/2)|) * delta``; cos, sin, the two
  products and the sum add three roundings.
- YaRN's attention factor: HF computes it in Python floats (float64), as the course does: ``rtol = 4 * EPS64``.

Adding a comparison: write one small function that takes a configuration's keyword arguments and returns a
:class:`Result`, and register it with :func:`compares` and its configurations (a short name each); its ids are
``posenc function[configuration]``. Import torch and transformers inside the function (this module is also imported
without them, by ``tests/test_hf_agreement.py``, for its ids), and call the posenc function through its module
(``rope_scaling.llama3_inv_freq(...)``, not a name imported from it) so that ``--perturb`` reaches it. A posenc function compared for
the first time also goes into ``MUST_COMPARE`` in tests/test_hf_agreement.py. This file imports nothing of the course
but ``posenc_solutions``.
"""

import argparse
import importlib
import json
import math
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from posenc_solutions import rope_layouts, rope_scaling  # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)  # 2**-23
EPS64 = float(np.finfo(np.float64).eps)
#: The relative change --perturb makes to a posenc function's results: about 84 EPS32, ten times the tolerances.
PERTURBATION = 1e-5


@dataclass
class Result:
    """What a comparison returns: HF's value and the course's, on the same inputs, and the tolerance."""

    hf: object  #: a torch tensor or a Python float, as HF returned it
    posenc: object  #: array_like
    rtol: float = 0.0
    atol: object = 0.0  #: a number, or an array of the values' shape (a tolerance per element)
    rule: str = ""  #: the tolerance, in words


@dataclass
class Comparison:
    id: str
    scheme: str
    hf: str  #: the HF function, dotted
    posenc: str  #: the posenc function, ``module.function`` in posenc_solutions
    config: str  #: the configuration, in short
    run: object = field(repr=False)  #: () -> Result


COMPARISONS = []  #: every comparison, in the order they run


def compares(posenc, hf, scheme, configs):
    """Register the decorated function once per configuration: `configs` maps a short name to
    ``(description, keyword arguments)``."""
    def register(function):
        for name, (description, kwargs) in configs.items():
            comparison = Comparison(f"{posenc}[{name}]", scheme, hf, posenc, description,
                                    lambda function=function, kwargs=kwargs: function(**kwargs))
            assert comparison.id not in {c.id for c in COMPARISONS}, f"two comparisons are {comparison.id}"
            COMPARISONS.append(comparison)
        return function
    return register


def ids():
    return [comparison.id for comparison in COMPARISONS]


# ---- helpers

def inv_freq_rtol(base):
    """The float32 tolerance of HF's inverse frequencies for `base` (see the module's docstring)."""
    return (math.log(base) / 2 + 3) * EPS32


def inv_freq_rule(base):
    return f"rtol (ln {base:g} / 2 + 3) EPS32: float32's exponent 2t/d and roundings"


def llama_config(head_dim, rope_parameters, max_position_embeddings=None, **more):
    """A LlamaConfig with one head's size `head_dim` and these rope_parameters (rope_theta among them)."""
    from transformers import LlamaConfig

    heads = more.pop("num_attention_heads", 2)
    return LlamaConfig(hidden_size=head_dim * heads, num_attention_heads=heads, head_dim=head_dim,
                       rope_parameters=rope_parameters, max_position_embeddings=max_position_embeddings or 4096, **more)


def rope_init(rope_type, config):
    """HF's inverse frequencies and attention factor for `config`, called as LlamaRotaryEmbedding.__init__ calls it."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    return ROPE_INIT_FUNCTIONS[rope_type](config)


# ---- RoPE scaling (posenc_solutions.rope_scaling) against transformers.modeling_rope_utils

LLAMA_2_7B = dict(hidden_size=4096, num_attention_heads=32, head_dim=None)  # config.json: head_dim = 4096 / 32

LINEAR = {
    "llama-2-7b-x2": ("Llama-2-7B (4096/32 heads, theta 1e4), factor 2", dict(config=LLAMA_2_7B, base=1e4, factor=2.0)),
    "llama-2-7b-x4": ("Llama-2-7B, factor 4", dict(config=LLAMA_2_7B, base=1e4, factor=4.0)),
    "d10-b500-x2.5": ("head_dim 10, theta 500, factor 2.5", dict(config=dict(head_dim=10), base=500.0, factor=2.5)),
    "d2-b1e4-x8": ("head_dim 2 (one pair), theta 1e4, factor 8", dict(config=dict(head_dim=2), base=1e4, factor=8.0)),
    "d64-b5e5-x1": ("head_dim 64, theta 5e5, factor 1 (plain RoPE)", dict(config=dict(head_dim=64), base=5e5, factor=1.0)),
}


def _config(sizes, rope_parameters, **more):
    """The model's config: `sizes` are a real model's (``model``: its config class, Llama's unless named), or only a
    ``head_dim``."""
    import transformers

    sizes = {key: value for key, value in sizes.items() if value is not None}
    if "hidden_size" not in sizes:
        return llama_config(sizes["head_dim"], rope_parameters, **more)
    config_class = getattr(transformers, sizes.pop("model", "LlamaConfig"))
    return config_class(**sizes, rope_parameters=rope_parameters, **more)


def _head_dim(sizes):
    return sizes.get("head_dim") or sizes["hidden_size"] // sizes["num_attention_heads"]


@compares("rope_scaling.linear_scaled_inv_freq", "transformers.modeling_rope_utils._compute_linear_scaling_rope_parameters",
          "RoPE scaling: position interpolation (rope_type linear)", LINEAR)
def linear(config, base, factor):
    hf, _ = rope_init("linear", _config(config, {"rope_type": "linear", "rope_theta": base, "factor": factor}))
    return Result(hf, rope_scaling.linear_scaled_inv_freq(_head_dim(config), base, factor),
                  rtol=inv_freq_rtol(base), rule=inv_freq_rule(base))


DYNAMIC = {  # seq_len: the positions 0 .. seq_len - 1 the model is run on; max_position_embeddings is L
    "llama-2-7b-x2-n8192": ("Llama-2-7B (L 4096), factor 2, seq_len 8192 (above L)",
                            dict(config=LLAMA_2_7B, base=1e4, factor=2.0, original=4096, seq_len=8192)),
    "llama-2-7b-x2-n2048": ("Llama-2-7B, factor 2, seq_len 2048 (below L: plain RoPE)",
                            dict(config=LLAMA_2_7B, base=1e4, factor=2.0, original=4096, seq_len=2048)),
    "llama-2-7b-x2-n4096": ("Llama-2-7B, factor 2, seq_len 4096 (= L)",
                            dict(config=LLAMA_2_7B, base=1e4, factor=2.0, original=4096, seq_len=4096)),
    "llama-2-7b-x2-n4097": ("Llama-2-7B, factor 2, seq_len 4097 (L + 1)",
                            dict(config=LLAMA_2_7B, base=1e4, factor=2.0, original=4096, seq_len=4097)),
    "llama-2-7b-x4-n16384": ("Llama-2-7B, factor 4, seq_len 16384",
                             dict(config=LLAMA_2_7B, base=1e4, factor=4.0, original=4096, seq_len=16384)),
    "llama-2-7b-x4-n5000": ("Llama-2-7B, factor 4, seq_len 5000",
                            dict(config=LLAMA_2_7B, base=1e4, factor=4.0, original=4096, seq_len=5000)),
    "d4-b1e4-x2-L8-n16": ("head_dim 4, theta 1e4, factor 2, L 8, seq_len 16",
                          dict(config=dict(head_dim=4), base=1e4, factor=2.0, original=8, seq_len=16)),
    "d6-b100-x3-L100-n250": ("head_dim 6, theta 100, factor 3, L 100, seq_len 250",
                             dict(config=dict(head_dim=6), base=100.0, factor=3.0, original=100, seq_len=250)),
    "d16-b1e4-x8-L512-n1000": ("head_dim 16, theta 1e4, factor 8, L 512, seq_len 1000",
                               dict(config=dict(head_dim=16), base=1e4, factor=8.0, original=512, seq_len=1000)),
}


@compares("rope_scaling.dynamic_ntk_inv_freq",
          "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding (dynamic_rope_update -> "
          "modeling_rope_utils._compute_dynamic_ntk_parameters)",
          "RoPE scaling: dynamic NTK (rope_type dynamic)", DYNAMIC)
def dynamic(config, base, factor, original, seq_len):
    """As the model runs it: LlamaRotaryEmbedding's forward on positions 0 .. seq_len - 1 recomputes inv_freq with
    seq_len = max(position_ids) + 1, a tensor, when it is above max_position_embeddings."""
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    hf_config = _config(config, {"rope_type": "dynamic", "rope_theta": base, "factor": factor},
                        max_position_embeddings=original)
    rotary = LlamaRotaryEmbedding(hf_config)
    head_dim = _head_dim(config)
    rotary(torch.zeros(1, seq_len, head_dim), torch.arange(seq_len)[None])
    enlarged = base * max(1.0, factor * seq_len / original - (factor - 1)) ** (head_dim / (head_dim - 2))
    return Result(rotary.inv_freq, rope_scaling.dynamic_ntk_inv_freq(head_dim, base, factor, original, seq_len),
                  rtol=inv_freq_rtol(enlarged), rule=inv_freq_rule(enlarged))


QWEN_25_7B = dict(model="Qwen2Config", hidden_size=3584, num_attention_heads=28, num_key_value_heads=4)

YARN = {  # original: original_max_position_embeddings
    "qwen2.5-7b": ("Qwen2.5-7B-Instruct (Qwen2Config, head_dim 128, theta 1e6), its card's yarn: factor 4, "
                   "original 32768", dict(config=QWEN_25_7B, base=1e6, factor=4.0, original=32768)),
    "d16-b100-x8-L4096": ("head_dim 16, theta 100, factor 8, original 4096 (high in [d/2, d-1])",
                          dict(config=dict(head_dim=16), base=100.0, factor=8.0, original=4096)),
    "d16-b20-x8-L65536": ("head_dim 16, theta 20, factor 8, original 65536 (low = high = d-1: every pair kept)",
                          dict(config=dict(head_dim=16), base=20.0, factor=8.0, original=65536)),
    "d8-b1e4-x2-L6": ("head_dim 8, theta 1e4, factor 2, original 6 (low = high = 0: the +0.001 guard)",
                      dict(config=dict(head_dim=8), base=1e4, factor=2.0, original=6)),
    "d32-b1e4-x16-L2048-beta8-2": ("head_dim 32, theta 1e4, factor 16, original 2048, beta_fast 8, beta_slow 2",
                                   dict(config=dict(head_dim=32), base=1e4, factor=16.0, original=2048,
                                        beta_fast=8.0, beta_slow=2.0)),
    "d64-b1e4-x1-L2048": ("head_dim 64, theta 1e4, factor 1 (plain RoPE, attention factor 1)",
                          dict(config=dict(head_dim=64), base=1e4, factor=1.0, original=2048)),
}


def _yarn(config, base, factor, original, beta_fast=None, beta_slow=None):
    """HF's (inv_freq, attention_factor) and the course's, for one YaRN configuration."""
    rope_parameters = {"rope_type": "yarn", "rope_theta": base, "factor": factor,
                       "original_max_position_embeddings": original}
    betas = {}
    if beta_fast is not None:
        rope_parameters.update(beta_fast=beta_fast, beta_slow=beta_slow)
        betas = dict(beta_fast=beta_fast, beta_slow=beta_slow)
    hf_config = _config(config, rope_parameters, max_position_embeddings=int(original * factor) + 1)
    return rope_init("yarn", hf_config), rope_scaling.yarn_inv_freq(_head_dim(config), base, factor, original, **betas)


@compares("rope_scaling.yarn_inv_freq", "transformers.modeling_rope_utils._compute_yarn_parameters",
          "RoPE scaling: YaRN (rope_type yarn), inverse frequencies", YARN)
def yarn(**kwargs):
    (hf, _), (ours, _) = _yarn(**kwargs)
    return Result(hf, ours, rtol=inv_freq_rtol(kwargs["base"]), rule=inv_freq_rule(kwargs["base"]))


@compares("rope_scaling.yarn_inv_freq:attention_factor", "transformers.modeling_rope_utils._compute_yarn_parameters",
          "RoPE scaling: YaRN (rope_type yarn), attention factor", YARN)
def yarn_attention_factor(**kwargs):
    (_, hf), (_, ours) = _yarn(**kwargs)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too")


LLAMA3 = {  # alpha, beta: low_freq_factor, high_freq_factor; original: original_max_position_embeddings
    "llama-3.1-8b": ("Llama-3.1-8B (4096/32 heads, theta 5e5): factor 8, low 1, high 4, original 8192",
                     dict(config=dict(hidden_size=4096, num_attention_heads=32, head_dim=None), base=5e5,
                          factor=8.0, alpha=1.0, beta=4.0, original=8192, max_position_embeddings=131072)),
    "llama-3.2-1b": ("Llama-3.2-1B (head_dim 64, theta 5e5): factor 32, low 1, high 4, original 8192",
                     dict(config=dict(hidden_size=2048, num_attention_heads=32, head_dim=64), base=5e5,
                          factor=32.0, alpha=1.0, beta=4.0, original=8192, max_position_embeddings=131072)),
    "llama-3.2-3b": ("Llama-3.2-3B (head_dim 128, theta 5e5): factor 32, low 1, high 4, original 8192",
                     dict(config=dict(hidden_size=3072, num_attention_heads=24, head_dim=128), base=5e5,
                          factor=32.0, alpha=1.0, beta=4.0, original=8192, max_position_embeddings=131072)),
    "d32-b1e4-x4-a2-b8-L2048": ("head_dim 32, theta 1e4, factor 4, low 2, high 8, original 2048",
                                dict(config=dict(head_dim=32), base=1e4, factor=4.0, alpha=2.0, beta=8.0,
                                     original=2048)),
    "d8-b1e4-x8-L1000": ("head_dim 8, theta 1e4, factor 8, low 1, high 4, original 1000 (every band)",
                         dict(config=dict(head_dim=8), base=1e4, factor=8.0, alpha=1.0, beta=4.0, original=1000)),
    "d4-b1e4-x8-L1000": ("head_dim 4, theta 1e4, factor 8, low 1, high 4, original 1000",
                         dict(config=dict(head_dim=4), base=1e4, factor=8.0, alpha=1.0, beta=4.0, original=1000)),
}


@compares("rope_scaling.llama3_inv_freq", "transformers.modeling_rope_utils._compute_llama3_parameters",
          "RoPE scaling: Llama 3.1 (rope_type llama3)", LLAMA3)
def llama3(config, base, factor, alpha, beta, original, max_position_embeddings=None):
    rope_parameters = {"rope_type": "llama3", "rope_theta": base, "factor": factor, "low_freq_factor": alpha,
                       "high_freq_factor": beta, "original_max_position_embeddings": original}
    hf, _ = rope_init("llama3", _config(config, rope_parameters,
                                        max_position_embeddings=max_position_embeddings or int(original * factor)))
    return Result(hf, rope_scaling.llama3_inv_freq(_head_dim(config), base, factor, alpha, beta, original),
                  rtol=inv_freq_rtol(base), rule=inv_freq_rule(base))


# ---- RoPE itself, half-split (posenc_solutions.rope_layouts) against Llama's rotary embedding

HALF_SPLIT = {  # positions: one row of position_ids, the same for the batch
    "llama-3-8b": ("Llama-3-8B (head_dim 128, theta 5e5, no scaling), 8 q / 2 kv heads, positions 0..15",
                   dict(head_dim=128, base=5e5, positions=list(range(16)), heads=(8, 2))),
    "llama-3-8b-far": ("Llama-3-8B, positions up to 8191 (its max_position_embeddings - 1)",
                       dict(head_dim=128, base=5e5, positions=[0, 1, 2, 255, 1000, 4095, 8190, 8191], heads=(4, 2))),
    "llama-2-7b": ("Llama-2-7B (head_dim 128, theta 1e4), positions 0..31",
                   dict(head_dim=128, base=1e4, positions=list(range(32)), heads=(2, 2))),
    "d8-b1e4-unordered": ("head_dim 8, theta 1e4, positions 5 0 3 3 100 (padded or packed ids)",
                          dict(head_dim=8, base=1e4, positions=[5, 0, 3, 3, 100], heads=(3, 1))),
    "d2-b10": ("head_dim 2 (one pair), theta 10, positions 0..6", dict(head_dim=2, base=10.0,
                                                                       positions=list(range(7)), heads=(1, 1))),
}


@compares("rope_layouts.apply_rope_half_split",
          "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding + apply_rotary_pos_emb",
          "RoPE, half-split layout (Llama's rotate_half)", HALF_SPLIT)
def half_split(head_dim, base, positions, heads, batch=2):
    """As LlamaModel runs it: cos, sin = rotary_emb(hidden_states, position_ids), then in each attention layer
    apply_rotary_pos_emb(q, k, cos, sin) with q, k of shape (batch, heads, seq, head_dim), float32."""
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = llama_config(head_dim, {"rope_type": "default", "rope_theta": base}, num_attention_heads=heads[0],
                          num_key_value_heads=heads[1], max_position_embeddings=max(8192, max(positions) + 1))
    generator = torch.Generator().manual_seed(0)
    length = len(positions)
    q = torch.randn(batch, heads[0], length, head_dim, generator=generator)
    k = torch.randn(batch, heads[1], length, head_dim, generator=generator)
    position_ids = torch.tensor(positions)[None].expand(batch, length)
    cos, sin = LlamaRotaryEmbedding(config)(torch.zeros(batch, length, head_dim * heads[0]), position_ids)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    hf = torch.cat([q_hf.flatten(), k_hf.flatten()])
    x = [q.double().numpy(), k.double().numpy()]  # the same values, exactly, in float64
    ours = np.concatenate([rope_layouts.apply_rope_half_split(v, positions, base).ravel() for v in x])
    atol = np.concatenate([_rotation_atol(v, positions, base).ravel() for v in x])
    return Result(hf, ours, atol=atol, rule="atol per element EPS32 (|x_t| + |x_t+d/2|) (p theta (ln(1/theta) / 2 + 2)"
                                            " + 3): float32 angles")


def _rotation_atol(x, positions, base):
    """The float32 tolerance of each element of HF's rotated `x` (see the module's docstring)."""
    half = x.shape[-1] // 2
    theta = base ** (-2.0 * np.arange(half) / x.shape[-1])
    angle = np.asarray(positions, dtype=float)[:, None] * theta
    pair = np.abs(x[..., :half]) + np.abs(x[..., half:])
    atol = EPS32 * pair * (angle * (np.log(1 / theta) / 2 + 2) + 3)
    return np.concatenate([atol, atol], axis=-1)


# ---- running them

def perturb(name, by=PERTURBATION):
    """Replace posenc_solutions' `name` (``module.function``) by a deliberately wrong copy: its results times
    (1 + by)."""
    module_name, _, function_name = name.partition(".")
    module = importlib.import_module(f"posenc_solutions.{module_name}")
    right = getattr(module, function_name)

    def scaled(value):
        if isinstance(value, tuple):
            return tuple(scaled(v) for v in value)
        return value * (1 + by)

    def wrong(*args, **kwargs):
        return scaled(right(*args, **kwargs))

    setattr(module, function_name, wrong)


def as_float64(value):
    """HF's value (a tensor or a float) as float64 numpy, and its dtype's name."""
    if hasattr(value, "detach"):
        return value.detach().double().numpy(), str(value.dtype).removeprefix("torch.")
    return np.asarray(value, dtype=np.float64), "float64, a Python float" if isinstance(value, float) else \
        str(np.asarray(value).dtype)


def run(comparison, against):
    """The comparison's row: its description, the differences, the tolerance, and whether it holds."""
    row = {"id": comparison.id, "scheme": comparison.scheme, "hf": comparison.hf,
           "posenc": f"posenc_solutions.{comparison.posenc.partition(':')[0]}", "config": comparison.config,
           "against": against}
    try:
        result = comparison.run()
        hf, dtype = as_float64(result.hf)
        ours = np.asarray(result.posenc, dtype=np.float64)
        if hf.shape != ours.shape:
            raise ValueError(f"HF's shape is {hf.shape}, posenc's {ours.shape}")
        difference = np.abs(hf - ours)
        allowed = np.broadcast_to(result.atol + result.rtol * np.abs(ours), ours.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(ours != 0, difference / np.abs(ours), np.where(difference == 0, 0.0, np.inf))
            excess = np.where(allowed > 0, difference / allowed, np.where(difference == 0, 0.0, np.inf))
        worst = np.unravel_index(int(np.argmax(excess)), ours.shape) if ours.size else ()
        ok = bool(np.all(np.isfinite(hf)) and np.all(difference <= allowed))
        row.update(max_abs_diff=float(difference.max(initial=0.0)), max_rel_diff=float(relative.max(initial=0.0)),
                   tolerance={"rtol": result.rtol, "atol": float(np.max(result.atol)), "rule": result.rule},
                   used=float(excess.max(initial=0.0)),  # the largest difference over what is allowed there
                   hf_dtype=dtype, size=int(ours.size),
                   worst={"index": [int(i) for i in worst], "hf": float(hf[worst]), "posenc": float(ours[worst]),
                          "diff": float(difference[worst]), "allowed": float(allowed[worst])},
                   ok=ok, error=None)
    except Exception:  # a comparison that raises is a failed row, with its traceback
        row.update(ok=False, error=traceback.format_exc())
    return row


def versions():
    import torch
    import transformers

    return f"transformers {transformers.__version__}, torch {torch.__version__}, numpy {np.__version__}"


def table(rows):
    """The rows as a text table: each posenc function against its HF function, then a line per configuration."""
    lines, heading = [], None
    width = max((len(row["id"].partition("[")[2]) for row in rows), default=0)
    for row in rows:
        if (row["id"].partition("[")[0], row["hf"]) != heading:
            heading = (row["id"].partition("[")[0], row["hf"])
            lines.append(f"{heading[0]}  vs  {heading[1]}{'  (HF: ' + row['hf_dtype'] + ')' if row.get('hf_dtype') else ''}")
        name = row["id"].partition("[")[2].rstrip("]")
        if row.get("error"):
            lines.append(f"  {name:<{width}}  ERROR {row['error'].strip().splitlines()[-1]}")
            continue
        tolerance = row["tolerance"]
        allowed = f"rtol {tolerance['rtol']:.2g}" if tolerance["rtol"] else f"atol <= {tolerance['atol']:.2g}"
        lines.append(f"  {name:<{width}}  max|diff| {row['max_abs_diff']:8.2g}  max rel {row['max_rel_diff']:8.2g}"
                     f"  {allowed:<15}  used {row['used']:4.0%}  {'ok' if row['ok'] else 'FAILED'}")
    return "\n".join(lines) + "\n" + USED + "\n"


USED = ("used: the largest difference over the one allowed there (the tolerance is per element); max rel: the "
        "largest |HF - posenc| / |posenc|, large for rotated values near 0")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--perturb", action="append", default=[], metavar="MODULE.FUNCTION",
                        help=f"replace this posenc function by one whose results are off by {PERTURBATION:g} "
                             "(relative), to see the comparisons fail; may be repeated")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="run only the comparisons whose id contains TEXT; may be repeated")
    parser.add_argument("--table", action="store_true", help="print a table instead of JSON lines")
    args = parser.parse_args(argv)
    from transformers.utils import logging

    logging.set_verbosity_error()  # HF's notes on the configs (an original length equal to the maximum, ...)
    against = versions()
    for name in args.perturb:
        perturb(name)
    rows = []
    for comparison in COMPARISONS:
        if args.only and not any(text in comparison.id for text in args.only):
            continue
        rows.append(run(comparison, against))
        if not args.table:
            print(json.dumps(rows[-1]), flush=True)
    if args.table:
        print(against)
        print(table(rows), end="")
    return 0 if all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
