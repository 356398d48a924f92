"""The course's reference functions (``posenc_solutions``) against Hugging Face transformers' own, run as HF's models
run them: the real config object (``LlamaConfig(..., rope_parameters=...)``, or the config class fed a
``config.json``), the function HF's model picks for it (``ROPE_INIT_FUNCTIONS[rope_type](config)``), or the model's
own modules: its rotary embedding and ``apply_rotary_pos_emb``, its attention layer's forward, its masks
(``masking_utils``) and its cache, step by step as a server runs them.

Run with the test-only environment, ``make hf-env`` (transformers and CPU torch, pinned in
``tests/system/hf/requirements.lock``)::

    .venv-hf/bin/python tests/system/hf/compare.py            # one JSON object per comparison, a line each
    .venv-hf/bin/python tests/system/hf/compare.py --table    # the same, as a table
    .venv-hf/bin/python tests/system/hf/compare.py --perturb rope_scaling.llama3_inv_freq   # a deliberately wrong one

``tests/system/test_hf_agreement.py`` runs it and has a test per comparison. It exits 0 when every comparison is within its
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
  So do LongRoPE's attention factor, DeepSeek's two temperatures (``yarn_get_mscale``, ``yarn_apply_mscale``) and
  every model's ``attention_scaling``.
- LongRoPE's inverse frequencies: the rule of inverse frequencies, + 1 EPS32: HF rounds each factor to float32.
- the same rotations with other frequencies (partial RoPE on its ``r`` dimensions, proportional RoPE, M-RoPE's
  sections, a dynamic-NTK KV cache whose keys each have the frequencies of their own step): the rule of rotated
  values, with those frequencies (the dimensions that pass through, and the pairs that do not turn, exactly). Past
  the trained length, dynamic NTK's enlarged base is a float32 tensor in HF (``factor * seq_len`` with a tensor
  ``seq_len``); its error, derived in :func:`_cache_atol`, is added to ``theta_t``'s.
- exact results (Llama 3.1's bands, stale keys, layer types, masks, M-RoPE's position ids, a config's RoPE settings):
  equal, with nothing allowed. Strings and dicts are compared as numbers made of them (:func:`_codes`,
  :func:`_settings`), and HF's type is reported.
- Llama 4's NoPE temperature ``ln(1 + floor((p + 1) / f)) a + 1`` in float32: ``atol = EPS32 (2 |a ln(1 + n)| +
  |tau| / 2)`` (log1p's ulp, ``a`` rounded to float32, the product; the sum).
- Swin V2's coordinates table, built in float32: ``atol = EPS32 (1.5 |v| + 0.5)`` (:func:`_table_atol`); its bias,
  an MLP in float32 through ``16 sigmoid``: derived per element in :func:`swin_bias`.
- tiled attention, float64 on both sides (HF's SDPA attention in float64): both sides' rounding, derived per query
  in :func:`tiled`.

Adding a comparison: write one small function that takes a configuration's keyword arguments and returns a
:class:`Result`, and register it with :func:`compares` and its configurations (a short name each); its ids are
``posenc function[configuration]``. Import torch and transformers inside the function (this module is also imported
without them, by ``tests/system/test_hf_agreement.py``, for its ids), and call the posenc function through its module
(``rope_scaling.llama3_inv_freq(...)``, not a name imported from it) so that ``--perturb`` reaches it. A posenc
function compared for the first time also goes into ``MUST_COMPARE`` in tests/system/test_hf_agreement.py. This file imports
nothing of the course but ``posenc_solutions``. ``--perturb`` changes numbers by ``PERTURBATION`` (relative) and exact
values by the least they can change (:func:`perturb`), so each configuration needs a value that is not 0 (Swin V2's
table of a 1 x 1 window, the single offset 0, is therefore compared through its bias only).
"""

import argparse
import copy
import importlib
import json
import math
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]  # tests/system/hf/compare.py: the repository
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from posenc_solutions import (deepseek_yarn, dynamic_cache, layer_plans, longrope, mrope, partial_rotary,  # noqa: E402
                              rope_config, rope_layouts, rope_scaling, swin_v2, tiled_attention)

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
    hf_dtype: str = ""  #: what HF returned, when `hf` is numbers made of it (a dict, a list of strings)


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


# ---- the third assignment (posenc-current): helpers

EXACT = "exact: integers, booleans and strings agree or they do not"


def _codes(hf_values, our_values):
    """Strings as integers, for an exact comparison: each one's index among HF's values (sorted); a posenc string
    that HF never gave is -1."""
    vocabulary = {value: code for code, value in enumerate(sorted(set(hf_values)))}
    return np.array([vocabulary[v] for v in hf_values]), np.array([vocabulary.get(v, -1) for v in our_values])


def _settings(hf, ours):
    """Two settings dicts as numbers, for an exact comparison: their values, key by key (sorted), numbers and lists
    of numbers as they are, a string 0 in HF's and 0 in posenc's if the same, 1 if not. Different keys raise,
    naming them (a failed row)."""
    if set(hf) != set(ours):
        raise ValueError(f"the keys differ: HF only {sorted(set(hf) - set(ours))}, posenc only "
                         f"{sorted(set(ours) - set(hf))}\n  HF     {hf}\n  posenc {ours}")
    hf_numbers, our_numbers = [], []
    for key in sorted(hf):
        if isinstance(hf[key], str) or isinstance(ours[key], str):
            hf_numbers.append(0.0)
            our_numbers.append(0.0 if ours[key] == hf[key] else 1.0)
            continue
        h, o = np.ravel(np.asarray(hf[key], dtype=np.float64)), np.ravel(np.asarray(ours[key], dtype=np.float64))
        if h.shape != o.shape:
            raise ValueError(f"{key}: HF has {hf[key]!r}, posenc {ours[key]!r}")
        hf_numbers += h.tolist()
        our_numbers += o.tolist()
    return np.array(hf_numbers), np.array(our_numbers)


def _json_config(model, config):
    """HF's config object for a ``config.json`` dict, as ``from_pretrained`` makes it: the model's config class
    called with the dict's keys. A deep copy: HF fills in the dicts it is given."""
    import transformers

    return getattr(transformers, model)(**copy.deepcopy(config))


def _turn_atol(x, angle, theta_error):
    """The float32 tolerance of each element of HF's half-split rotation of `x` (..., L, d) by `angle` (L, d/2):
    ``EPS32 (|x_t| + |x_t+d/2|) (angle (theta_error + 1) + 3)``, with `theta_error` the relative error of HF's
    float32 frequency, in EPS32 (per pair, or per token and pair); the + 1 is the rounding of the product."""
    half = x.shape[-1] // 2
    pair = np.abs(x[..., :half]) + np.abs(x[..., half:])
    atol = EPS32 * pair * (angle * (theta_error + 1) + 3)
    return np.concatenate([atol, atol], axis=-1)


def _default_theta(dim, base):
    """RoPE's frequencies and their float32 error in HF (in EPS32): the exponent's rounding, ln(1/theta) / 2, and
    one for the power and the reciprocal."""
    theta = float(base) ** (-np.arange(0, dim, 2) / dim)
    return theta, np.log(1 / theta) / 2 + 1


TURN_RULE = "atol per element EPS32 (|x_t| + |x_t+d/2|) (p theta (ln(1/theta) / 2 + 2) + 3): float32 angles"


def _gaussian(shape, seed=0):
    """Float32 values (torch), the same for every run."""
    import torch

    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---- reading config.json (posenc_solutions.rope_config) against HF's config classes

#: Made-up LongRoPE factors of Phi-3-mini's length (48 = 96 / 2): short ones near 1, long ones from 1 to 64.
SHORT_48 = [round(1 + 0.25 * t / 47, 4) for t in range(48)]
LONG_48 = [round(64 ** (t / 47), 4) for t in range(48)]

LLAMA_2_7B_JSON = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
                   "rope_theta": 10000.0, "rope_scaling": None}
LLAMA_31_8B_JSON = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "max_position_embeddings": 131072, "rope_theta": 500000.0,
                    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
LLAMA_32_1B_V5_JSON = {"hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
                       "max_position_embeddings": 131072,
                       "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
                                           "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                           "original_max_position_embeddings": 8192}}
LINEAR_2023_JSON = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 16384,
                    "rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 4.0}}
DYNAMIC_2023_JSON = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
                     "rope_theta": 10000.0, "rope_scaling": {"type": "dynamic", "factor": 2.0}}
QWEN_25_7B_YARN_JSON = {"hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
                        "max_position_embeddings": 32768, "rope_theta": 1000000.0,
                        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}}
PHI_3_MINI_128K_JSON = {"hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
                        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                        "rope_theta": 10000.0,
                        "rope_scaling": {"type": "longrope", "short_factor": SHORT_48, "long_factor": LONG_48}}
PHI_4_MINI_JSON = {"hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 8,
                   "partial_rotary_factor": 0.75, "max_position_embeddings": 131072,
                   "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
                   "rope_scaling": {"type": "longrope", "short_factor": SHORT_48, "long_factor": LONG_48}}
PHI_2_JSON = {"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
              "max_position_embeddings": 2048, "rope_theta": 10000.0}

ROPE_PARAMETERS = {
    "llama-2-7b": ("Llama-2-7B's config.json (LlamaConfig): rope_scaling null, rope_theta 1e4",
                   dict(model="LlamaConfig", config=LLAMA_2_7B_JSON)),
    "llama-3.1-8b": ("Llama-3.1-8B's (2024 spelling: rope_scaling with rope_type llama3)",
                     dict(model="LlamaConfig", config=LLAMA_31_8B_JSON)),
    "linear-type": ("Llama-2-7B sizes, 2023 spelling: rope_scaling {type: linear, factor 4}",
                    dict(model="LlamaConfig", config=LINEAR_2023_JSON)),
    "dynamic-type": ("Llama-2-7B sizes, rope_scaling {type: dynamic, factor 2}",
                     dict(model="LlamaConfig", config=DYNAMIC_2023_JSON)),
    "llama-3.2-1b-v5": ("Llama-3.2-1B's, transformers 5 spelling: rope_parameters with rope_theta inside",
                        dict(model="LlamaConfig", config=LLAMA_32_1B_V5_JSON)),
    "qwen2.5-7b-yarn": ("Qwen2.5-7B-Instruct's (Qwen2Config) with its card's rope_scaling {type: yarn, factor 4, "
                        "original 32768}", dict(model="Qwen2Config", config=QWEN_25_7B_YARN_JSON)),
    "phi-3-mini-128k": ("Phi-3-mini-128k's (Phi3Config): longrope, original_max_position_embeddings 4096 at top "
                        "level, made-up factors", dict(model="Phi3Config", config=PHI_3_MINI_128K_JSON)),
    "phi-3-original-twice": ("Phi-3-mini-128k's with original_max_position_embeddings 2048 in rope_scaling too: the "
                             "top-level 4096 wins", dict(model="Phi3Config", config={
                                 **PHI_3_MINI_128K_JSON, "rope_scaling": {**PHI_3_MINI_128K_JSON["rope_scaling"],
                                                                          "original_max_position_embeddings": 2048}})),
    "phi-4-mini": ("Phi-4-mini's (Phi3Config): longrope, partial_rotary_factor 0.75 at top level",
                   dict(model="Phi3Config", config=PHI_4_MINI_JSON)),
    "phi-2": ("Phi-2's (PhiConfig): no rope_scaling, partial_rotary_factor 0.4 at top level",
              dict(model="PhiConfig", config=PHI_2_JSON)),
    "yarn-no-original": ("rope_scaling {rope_type: yarn, factor 4} without original_max_position_embeddings: "
                         "max_position_embeddings 131072 stands in", dict(model="LlamaConfig", config={
                             "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})),
    "theta-twice": ("rope_theta 1e4 at top level and 5e5 in rope_parameters: the dict's wins",
                    dict(model="LlamaConfig", config={"rope_theta": 10000.0, "rope_parameters": {
                        "rope_type": "default", "rope_theta": 500000.0}})),
    "empty-rope-scaling": ("rope_scaling {} beside rope_parameters {linear, factor 3, theta 100}",
                           dict(model="LlamaConfig", config={"rope_scaling": {}, "rope_parameters": {
                               "rope_type": "linear", "factor": 3.0, "rope_theta": 100.0}})),
    "no-rope-keys": ("a config.json with no RoPE key at all", dict(model="LlamaConfig", config={})),
}


@compares("rope_config.rope_parameters_from_config",
          "transformers.modeling_rope_utils.RotaryEmbeddingConfigMixin (convert_rope_params_to_dict, "
          "standardize_rope_params): <Model>Config(**config.json).rope_parameters",
          "Reading config.json: RoPE settings in one spelling", ROPE_PARAMETERS)
def read_rope_parameters(model, config):
    hf = dict(_json_config(model, config).rope_parameters)
    ours = rope_config.rope_parameters_from_config(copy.deepcopy(config))
    if "partial_rotary_factor" not in ours and hf.get("partial_rotary_factor") == 1.0:
        del hf["partial_rotary_factor"]  # Phi3Config's class default, not config.json's; absent means 1 in posenc
    hf_numbers, our_numbers = _settings(hf, ours)
    return Result(hf_numbers, our_numbers, rule=EXACT + " (every key and value; Phi3Config's own default "
                  "partial_rotary_factor 1.0 is left out when posenc has none: absent means 1)",
                  hf_dtype="dict (Python)")


#: Default RoPE with a partial_rotary_factor is Phi's (PhiConfig): Llama's own default RoPE
#: (LlamaRotaryEmbedding.compute_default_rope_parameters) ignores partial_rotary_factor and rotates the whole head.
FROM_CONFIG = {  # seq_len: the model's forward runs on positions 0 .. seq_len - 1 (None: as built)
    "phi-2": ("Phi-2's config.json (PhiConfig): default RoPE on 32 of 80 dimensions (partial_rotary_factor 0.4)",
              dict(model="PhiConfig", config=PHI_2_JSON, seq_len=None)),
    "llama-2-7b": ("Llama-2-7B's (rope_scaling null)", dict(model="LlamaConfig", config=LLAMA_2_7B_JSON, seq_len=None)),
    "linear-type": ("rope_scaling {type: linear, factor 4} (2023 spelling)",
                    dict(model="LlamaConfig", config=LINEAR_2023_JSON, seq_len=None)),
    "dynamic-type": ("rope_scaling {type: dynamic, factor 2}, as built (seq_len None: L = 4096)",
                     dict(model="LlamaConfig", config=DYNAMIC_2023_JSON, seq_len=None)),
    "dynamic-type-n3000": ("the same, run on 3000 positions (below L)",
                           dict(model="LlamaConfig", config=DYNAMIC_2023_JSON, seq_len=3000)),
    "dynamic-type-n8192": ("the same, run on 8192 positions (twice L)",
                           dict(model="LlamaConfig", config=DYNAMIC_2023_JSON, seq_len=8192)),
    "qwen2.5-7b-yarn": ("Qwen2.5-7B-Instruct's with its card's yarn (Qwen2Config)",
                        dict(model="Qwen2Config", config=QWEN_25_7B_YARN_JSON, seq_len=None)),
    "phi-3-mini-128k": ("Phi-3-mini-128k's (Phi3Config, made-up factors), as built (short factors)",
                        dict(model="Phi3Config", config=PHI_3_MINI_128K_JSON, seq_len=None)),
    "phi-3-mini-128k-n4096": ("the same, run on 4096 positions (= original: short factors)",
                              dict(model="Phi3Config", config=PHI_3_MINI_128K_JSON, seq_len=4096)),
    "phi-3-mini-128k-n4097": ("the same, run on 4097 positions (long factors)",
                              dict(model="Phi3Config", config=PHI_3_MINI_128K_JSON, seq_len=4097)),
    "phi-4-mini-n4097": ("Phi-4-mini's (longrope on 96 of 128 dimensions), run on 4097 positions",
                         dict(model="Phi3Config", config=PHI_4_MINI_JSON, seq_len=4097)),
    "llama-3.1-8b": ("Llama-3.1-8B's", dict(model="LlamaConfig", config=LLAMA_31_8B_JSON, seq_len=None)),
    "llama-3.2-1b-v5": ("Llama-3.2-1B's, transformers 5 spelling",
                        dict(model="LlamaConfig", config=LLAMA_32_1B_V5_JSON, seq_len=None)),
}


def _from_config(model, config, seq_len):
    """HF's (inv_freq, attention_factor) and the course's, and the tolerance of the inverse frequencies. HF's as the
    model has them: its rotary embedding built from the config (the model's default RoPE, or
    ``ROPE_INIT_FUNCTIONS[rope_type](config)``), then, for a length, its forward on positions 0 .. seq_len - 1
    (``dynamic_rope_update``: ``ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len=max(position_ids) + 1)``)."""
    import importlib as imports

    import torch

    name = model.removesuffix("Config")
    rotary_class = getattr(imports.import_module(f"transformers.models.{name.lower()}.modeling_{name.lower()}"),
                           f"{name}RotaryEmbedding")
    rotary = rotary_class(_json_config(model, config))
    if seq_len is not None:
        rotary(torch.zeros(1, seq_len, 1), torch.arange(seq_len)[None])
    hf = (rotary.inv_freq, rotary.attention_scaling)
    ours = rope_config.inv_freq_from_config(copy.deepcopy(config), seq_len)
    settings = rotary.config.rope_parameters
    base = settings["rope_theta"]
    if settings["rope_type"] == "longrope":
        return hf, ours, _longrope_rtol(base)
    if settings["rope_type"] == "dynamic" and seq_len is not None and seq_len > config["max_position_embeddings"]:
        dim = 2 * len(ours[0])
        factor = settings["factor"]
        base *= (factor * seq_len / config["max_position_embeddings"] - (factor - 1)) ** (dim / (dim - 2))
    return hf, ours, (inv_freq_rtol(base), inv_freq_rule(base))


@compares("rope_config.inv_freq_from_config",
          "transformers.models.<model>.modeling_<model>.<Model>RotaryEmbedding (ROPE_INIT_FUNCTIONS[rope_type] "
          "or the model's default; forward: dynamic_rope_update)",
          "Reading config.json: the inverse frequencies it asks for", FROM_CONFIG)
def from_config(**kwargs):
    (hf, _), (ours, _), (rtol, rule) = _from_config(**kwargs)
    return Result(hf, ours, rtol=rtol, rule=rule)


@compares("rope_config.inv_freq_from_config:attention_factor",
          "transformers.models.<model>.modeling_<model>.<Model>RotaryEmbedding.attention_scaling",
          "Reading config.json: the attention factor it asks for", FROM_CONFIG)
def from_config_attention_factor(**kwargs):
    (_, hf), (_, ours), _ = _from_config(**kwargs)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too")


#: Not compared: a wavelength exactly on a threshold. llama3_frequency_bands' docstring example (head_dim 4, theta
#: 100, low 1, high 2, original 20 pi: wavelength 20 pi exactly, band 1) is band 2 in HF, whose float32 wavelength
#: 62.831856 is past 20 pi = 62.831853. The configurations here are 0.3 % or more from a threshold.
BANDS = {  # alpha, beta: low_freq_factor, high_freq_factor; original: original_max_position_embeddings
    "llama-3.1-8b": ("Llama-3.1-8B: head_dim 128, theta 5e5, low 1, high 4, original 8192",
                     dict(head_dim=128, base=5e5, alpha=1.0, beta=4.0, original=8192)),
    "llama-3.2-1b": ("Llama-3.2-1B: head_dim 64, theta 5e5, low 1, high 4, original 8192",
                     dict(head_dim=64, base=5e5, alpha=1.0, beta=4.0, original=8192)),
    "d32-b1e4-a2-b8-L2048": ("head_dim 32, theta 1e4, low 2, high 8, original 2048",
                             dict(head_dim=32, base=1e4, alpha=2.0, beta=8.0, original=2048)),
    "d8-b1e4-L1000": ("head_dim 8, theta 1e4, low 1, high 4, original 1000 (every band)",
                      dict(head_dim=8, base=1e4, alpha=1.0, beta=4.0, original=1000)),
}


@compares("rope_config.llama3_frequency_bands",
          "transformers.modeling_rope_utils._compute_llama3_parameters (its two torch.where masks)",
          "RoPE scaling: Llama 3.1's three bands", BANDS)
def bands(head_dim, base, alpha, beta, original):
    """HF's bands are its own masks: the conditions of the two ``torch.where`` in ``_compute_llama3_parameters``
    (``wavelen > low_freq_wavelen``: divided; ``is_medium_freq``: blended), recorded as it runs."""
    import torch

    config = llama_config(head_dim, {"rope_type": "llama3", "rope_theta": base, "factor": 8.0,
                                     "low_freq_factor": alpha, "high_freq_factor": beta,
                                     "original_max_position_embeddings": original},
                          max_position_embeddings=8 * original)
    conditions, where = [], torch.where

    def recording_where(condition, *args, **kwargs):
        conditions.append(condition.clone())
        return where(condition, *args, **kwargs)

    torch.where = recording_where
    try:
        rope_init("llama3", config)
    finally:
        torch.where = where
    if len(conditions) != 2:
        raise RuntimeError(f"_compute_llama3_parameters called torch.where {len(conditions)} times, not 2: its masks "
                           "are not where this comparison looks for them")
    divided, blended = conditions
    hf = torch.where(divided, 2, torch.where(blended, 1, 0))
    return Result(hf, rope_config.llama3_frequency_bands(head_dim, base, alpha, beta, original), rule=EXACT)


# ---- LongRoPE (posenc_solutions.longrope) against _compute_longrope_parameters and Phi-3's rotary embedding

TINY_LONGROPE_JSON = {"hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64,
                      "original_max_position_embeddings": 16, "rope_theta": 100.0,
                      "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5, 2.0, 2.5],
                                       "long_factor": [3.0, 5.0, 7.0, 11.0]}}

LONGROPE = {  # seq_len: as HF's function is called (None at build, original + 1 by longrope_frequency_update)
    "phi-3-mini-128k": ("Phi-3-mini-128k (head_dim 96, theta 1e4, original 4096, made-up factors), seq_len None",
                        dict(config=PHI_3_MINI_128K_JSON, seq_len=None)),
    "phi-3-mini-128k-n4096": ("the same, seq_len 4096 (= original: short factors)",
                              dict(config=PHI_3_MINI_128K_JSON, seq_len=4096)),
    "phi-3-mini-128k-n4097": ("the same, seq_len 4097 (long factors)", dict(config=PHI_3_MINI_128K_JSON, seq_len=4097)),
    "phi-4-mini-n4097": ("Phi-4-mini (96 of 128 dimensions rotate), seq_len 4097",
                         dict(config=PHI_4_MINI_JSON, seq_len=4097)),
    "d8-L16-factor-n17": ("head_dim 8, theta 100, original 16, max 64, rope_scaling's factor 2 (not 64 / 16), "
                          "seq_len 17", dict(config={**TINY_LONGROPE_JSON, "rope_scaling": {
                              **TINY_LONGROPE_JSON["rope_scaling"], "factor": 2.0}}, seq_len=17)),
    "d8-L16-attention-factor-n16": ("the same sizes, rope_scaling's attention_factor 1.25, seq_len 16",
                                    dict(config={**TINY_LONGROPE_JSON, "rope_scaling": {
                                        **TINY_LONGROPE_JSON["rope_scaling"], "attention_factor": 1.25}}, seq_len=16)),
}


def _longrope(config, seq_len):
    """HF's (inv_freq, attention_factor) from ``_compute_longrope_parameters`` on the model's config, and the
    course's from the same settings."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    hf_config = _json_config("Phi3Config", config)
    hf = ROPE_INIT_FUNCTIONS["longrope"](hf_config, None, seq_len=seq_len)
    settings = config["rope_scaling"]
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    ours = longrope.longrope_inv_freq(int(head_dim * config.get("partial_rotary_factor", 1.0)),
                                      config["rope_theta"], settings["short_factor"], settings["long_factor"],
                                      config["original_max_position_embeddings"], config["max_position_embeddings"],
                                      seq_len, factor=settings.get("factor"),
                                      attention_factor=settings.get("attention_factor"))
    return hf, ours


def _longrope_rtol(base):
    """LongRoPE's inverse frequencies' tolerance: the rule of inverse frequencies, + 1 EPS32 for the factors, which
    HF rounds to float32 (``torch.tensor(long_factor, dtype=torch.float32)``)."""
    return inv_freq_rtol(base) + EPS32, inv_freq_rule(base) + "; + 1 EPS32: the factors' float32 rounding"


@compares("longrope.longrope_inv_freq", "transformers.modeling_rope_utils._compute_longrope_parameters",
          "RoPE scaling: LongRoPE (rope_type longrope), inverse frequencies", LONGROPE)
def longrope_frequencies(config, seq_len):
    (hf, _), (ours, _) = _longrope(config, seq_len)
    rtol, rule = _longrope_rtol(config["rope_theta"])
    return Result(hf, ours, rtol=rtol, rule=rule)


@compares("longrope.longrope_inv_freq:attention_factor",
          "transformers.modeling_rope_utils._compute_longrope_parameters",
          "RoPE scaling: LongRoPE (rope_type longrope), attention factor", LONGROPE)
def longrope_factor(config, seq_len):
    (_, hf), (_, ours) = _longrope(config, seq_len)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too")


SWITCH = {  # forwards: the position ids of each forward call, in order (start, stop)
    "phi-3-mini-prompt-4096": ("Phi-3-mini-128k, one forward on positions 0..4095 (ends at L - 1: short factors)",
                               dict(config=PHI_3_MINI_128K_JSON, forwards=[(0, 4096)])),
    "phi-3-mini-prompt-4097": ("the same, positions 0..4096 (ends at L: long factors)",
                               dict(config=PHI_3_MINI_128K_JSON, forwards=[(0, 4097)])),
    "phi-3-mini-decode-4096": ("the same, a prompt of 4096 then one decoded token at position 4096",
                               dict(config=PHI_3_MINI_128K_JSON, forwards=[(0, 4096), (4096, 4097)])),
    "phi-3-mini-long-then-short": ("the same, 5000 positions, then a new prompt of 100: back to short factors",
                                   dict(config=PHI_3_MINI_128K_JSON, forwards=[(0, 5000), (0, 100)])),
    "phi-4-mini-prompt-4097": ("Phi-4-mini (96 of 128 dimensions), positions 0..4096",
                               dict(config=PHI_4_MINI_JSON, forwards=[(0, 4097)])),
}


@compares("longrope.longrope_inv_freq:switch",
          "transformers.models.phi3.modeling_phi3.Phi3RotaryEmbedding.forward (dynamic_rope_update: "
          "longrope_frequency_update)",
          "RoPE scaling: LongRoPE's switch at run time", SWITCH)
def longrope_switch(config, forwards):
    """As Phi3Model runs it: one rotary embedding, its forward called on each position ids in turn; its inv_freq
    after the last, against the course's for the length that forward saw (its last position + 1)."""
    import torch
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    rotary = Phi3RotaryEmbedding(_json_config("Phi3Config", config))
    for start, stop in forwards:
        rotary(torch.zeros(1, stop - start, 1), torch.arange(start, stop)[None])
    settings = config["rope_scaling"]
    head_dim = int(config["hidden_size"] // config["num_attention_heads"] * config.get("partial_rotary_factor", 1.0))
    ours, _ = longrope.longrope_inv_freq(head_dim, config["rope_theta"], settings["short_factor"],
                                         settings["long_factor"], config["original_max_position_embeddings"],
                                         config["max_position_embeddings"], forwards[-1][1])
    rtol, rule = _longrope_rtol(config["rope_theta"])
    return Result(rotary.inv_freq, ours, rtol=rtol, rule=rule)


LONGROPE_ATTENTION = {  # the config's lengths; factor: rope_scaling's, if any
    "phi-3-mini-128k": ("Phi-3-mini-128k: max 131072, original 4096 (factor 32)",
                        dict(max_position=131072, original=4096)),
    "ratio-100000": ("max 100000, original 4096 (factor 24.4140625)", dict(max_position=100000, original=4096)),
    "factor-key-16": ("rope_scaling's factor 16, max 131072, original 4096 (the key wins)",
                      dict(max_position=131072, original=4096, factor=16.0)),
    "no-extension": ("max = original = 4096 (factor 1: attention factor 1)", dict(max_position=4096, original=4096)),
    "L2": ("original 2, max 64 (ln L = ln 2)", dict(max_position=64, original=2)),
}


@compares("longrope.longrope_attention_factor", "transformers.modeling_rope_utils._compute_longrope_parameters",
          "RoPE scaling: LongRoPE's attention factor", LONGROPE_ATTENTION)
def longrope_attention(max_position, original, factor=None):
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope_scaling = {"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    if factor is not None:
        rope_scaling["factor"] = factor
    config = _json_config("Phi3Config", {"hidden_size": 16, "num_attention_heads": 2, "rope_theta": 1e4,
                                         "max_position_embeddings": max_position,
                                         "original_max_position_embeddings": original, "rope_scaling": rope_scaling})
    _, hf = ROPE_INIT_FUNCTIONS["longrope"](config)
    ours = longrope.longrope_attention_factor(max_position / original if factor is None else factor, original)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too")


# ---- a KV cache under dynamic NTK (posenc_solutions.dynamic_cache) against Llama's rotary embedding, run by token

CACHE = {  # head_dim, base, factor, original (L = max_position_embeddings), prompt (P), tokens (N)
    "llama-2-7b-P4090-N4100": ("Llama-2-7B (head_dim 128, theta 1e4), dynamic factor 2, L 4096: a prompt of 4090, "
                               "10 decoded tokens past L", dict(head_dim=128, base=1e4, factor=2.0, original=4096,
                                                                 prompt=4090, tokens=4100)),
    "d8-L8-P4-N12": ("head_dim 8, theta 1e4, factor 2, L 8: a prompt of 4 within L, decoded to 12",
                     dict(head_dim=8, base=1e4, factor=2.0, original=8, prompt=4, tokens=12)),
    "d8-L8-P10-N14": ("the same, a prompt of 10 (already past L), decoded to 14",
                      dict(head_dim=8, base=1e4, factor=2.0, original=8, prompt=10, tokens=14)),
    "d8-L8-P3-N6": ("the same, a prompt of 3 decoded to 6 (all within L: nothing stale)",
                    dict(head_dim=8, base=1e4, factor=2.0, original=8, prompt=3, tokens=6)),
    "d16-b500-x4-L6-P1-N10": ("head_dim 16, theta 500, factor 4, L 6: a prompt of one token, decoded to 10",
                              dict(head_dim=16, base=500.0, factor=4.0, original=6, prompt=1, tokens=10)),
}


def _served(head_dim, base, factor, original, prompt, tokens):
    """A dynamic-NTK Llama's keys, as a server makes them: one rotary embedding, its forward on the prompt's
    positions, then on each new token's position alone; each forward's keys rotated by ``apply_rotary_pos_emb`` and
    kept (a KV cache). Returns the keys (float32, unrotated), the cached keys, and the keys rotated afresh with
    the final frequencies (a forward on all positions at the end)."""
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = llama_config(head_dim, {"rope_type": "dynamic", "rope_theta": base, "factor": factor},
                          max_position_embeddings=original)
    rotary = LlamaRotaryEmbedding(config)
    keys = _gaussian((1, 2, tokens, head_dim))

    def rotated(start, stop):
        cos, sin = rotary(keys[:, :, start:stop], torch.arange(start, stop)[None])
        return apply_rotary_pos_emb(keys[:, :, start:stop], keys[:, :, start:stop], cos, sin)[1]

    cached = torch.cat([rotated(0, prompt)] + [rotated(t, t + 1) for t in range(prompt, tokens)], dim=2)
    return keys, cached, rotated(0, tokens)


def _cache_atol(x, head_dim, base, factor, original, prompt):
    """The float32 tolerance of each cached key: `_turn_atol` with each key's own frequencies (those of the length
    it was computed at). Past L, HF's enlarged base is a float32 tensor (``factor * seq_len`` with a tensor
    seq_len): x = s l / L and r = x - (s - 1) are off by up to (x / r + 1/2) EPS32 (relative), the power
    d / (d - 2) multiplies that, the power and the product with the base add 2; theta_t = base'^(-2t/d) carries
    2t/d of it."""
    tokens = x.shape[-2]
    lengths = np.maximum(np.arange(1, tokens + 1), prompt)
    exponent = np.arange(0, head_dim, 2) / head_dim
    theta, error = [], []
    for length in lengths:
        enlarged, beta = float(base), 0.0
        if length > original:
            scaled = factor * length / original
            ratio = scaled - (factor - 1)
            enlarged *= ratio ** (head_dim / (head_dim - 2))
            beta = head_dim / (head_dim - 2) * (scaled / ratio + 0.5) + 2
        t = enlarged ** -exponent
        theta.append(t)
        error.append(np.log(1 / t) / 2 + 1 + exponent * beta)
    theta, error = np.array(theta), np.array(error)
    return _turn_atol(x, np.arange(tokens)[:, None] * theta, error)


@compares("dynamic_cache.cached_keys",
          "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding (rope_type dynamic, a forward per step) + "
          "apply_rotary_pos_emb",
          "A KV cache under dynamic NTK: the keys it holds", CACHE)
def cache_keys(head_dim, base, factor, original, prompt, tokens):
    keys, cached, _ = _served(head_dim, base, factor, original, prompt, tokens)
    x = keys.double().numpy()
    ours = dynamic_cache.cached_keys(
        x, prompt, lambda n: rope_scaling.dynamic_ntk_inv_freq(head_dim, base, factor, original, n))
    return Result(cached, ours, atol=_cache_atol(x, head_dim, base, factor, original, prompt),
                  rule="atol per element: " + TURN_RULE + ", with each key's frequencies and, past L, float32's "
                                                          "enlarged base")


@compares("dynamic_cache.stale_keys",
          "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding (rope_type dynamic) + apply_rotary_pos_emb: "
          "the cached keys that differ from keys rotated afresh",
          "A KV cache under dynamic NTK: its stale keys", CACHE)
def stale(head_dim, base, factor, original, prompt, tokens):
    """HF's stale keys: those of its cache (as served) that are not, bit for bit, the keys its rotary embedding
    gives with the final frequencies. Position 0 is left out: it turns by 0 radians whatever the frequencies, so it
    never differs (stale_keys' docstring: it may be stale and still right)."""
    _, cached, fresh = _served(head_dim, base, factor, original, prompt, tokens)
    differs = (cached != fresh).any(dim=-1).any(dim=1)[0]
    return Result(differs[1:], dynamic_cache.stale_keys(tokens, prompt, original)[1:], rule=EXACT)


# ---- partial rotary embeddings (posenc_solutions.partial_rotary)

NEOX = {  # head_dim, fraction: rotary_pct
    "pythia-160m": ("Pythia-160M (GPTNeoXConfig: 768/12 heads, rotary_pct 0.25: 16 of 64), positions 0..15",
                    dict(hidden_size=768, heads=12, fraction=0.25, base=10000, positions=list(range(16)))),
    "gpt-neox-20b-far": ("GPT-NeoX-20B (6144/64 heads, rotary_pct 0.25: 24 of 96), positions up to 2047",
                         dict(hidden_size=6144, heads=64, fraction=0.25, base=10000,
                              positions=[0, 1, 2, 100, 1000, 2046, 2047])),
    "d16-pct0.5-unordered": ("head_dim 16, rotary_pct 0.5 (8 of 16), positions 7 0 3 3 50",
                             dict(hidden_size=32, heads=2, fraction=0.5, base=10000, positions=[7, 0, 3, 3, 50])),
}


def _partial_atol(x, positions, rotary_dim, base):
    """`_turn_atol` on the first `rotary_dim` dimensions; the others pass through: exact."""
    theta, error = _default_theta(rotary_dim, base)
    atol = _turn_atol(x[..., :rotary_dim], np.asarray(positions, dtype=float)[:, None] * theta, error)
    return np.concatenate([atol, np.zeros(x[..., rotary_dim:].shape)], axis=-1)


@compares("partial_rotary.apply_partial_rotary",
          "transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding + apply_rotary_pos_emb",
          "Partial RoPE: the first dimensions (GPT-NeoX's rotary_pct)", NEOX)
def neox(hidden_size, heads, fraction, base, positions):
    import torch
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

    config = _json_config("GPTNeoXConfig", {"hidden_size": hidden_size, "num_attention_heads": heads,
                                            "rotary_pct": fraction, "rotary_emb_base": base,
                                            "max_position_embeddings": 2048})
    head_dim = hidden_size // heads
    q = _gaussian((2, 2, len(positions), head_dim))
    position_ids = torch.tensor(positions)[None].expand(2, -1)
    cos, sin = GPTNeoXRotaryEmbedding(config)(q, position_ids)
    hf, _ = apply_rotary_pos_emb(q, q, cos, sin)
    x = q.double().numpy()
    rotary_dim = int(head_dim * fraction)
    return Result(hf, partial_rotary.apply_partial_rotary(x, positions, fraction, base),
                  atol=_partial_atol(x, positions, rotary_dim, base),
                  rule="atol per element: " + TURN_RULE + " on the rotated dimensions; the others exact")


PHI = {
    "phi-2": ("Phi-2's head (PhiConfig: head_dim 80, partial_rotary_factor 0.4: 32 rotate), 2 heads, positions 0..11",
              dict(positions=list(range(12)))),
    "phi-2-far": ("the same, positions up to 2047 (its max_position_embeddings - 1)",
                  dict(positions=[0, 5, 511, 1024, 2046, 2047])),
}


@compares("partial_rotary.apply_partial_rotary",
          "transformers.models.phi.modeling_phi.PhiAttention.forward (PhiRotaryEmbedding, apply_rotary_pos_emb on "
          "query[..., :rotary_ndims])",
          "Partial RoPE: the first dimensions (Phi's partial_rotary_factor)", PHI)
def phi(positions, heads=2, head_dim=80, fraction=0.4, base=10000.0):
    """As PhiModel runs it: its rotary embedding's cos and sin, then PhiAttention's forward (which splits the
    rotated dimensions off itself), with the identity as q_proj; the query it hands to the attention function is
    read by an attention function registered for that (AttentionInterface)."""
    import torch
    from transformers.models.phi.modeling_phi import PhiAttention, PhiRotaryEmbedding

    config = _json_config("PhiConfig", {"hidden_size": heads * head_dim, "num_attention_heads": heads,
                                        "partial_rotary_factor": fraction, "rope_theta": base,
                                        "max_position_embeddings": 2048})
    config._attn_implementation = _capturing_attention()
    attention = PhiAttention(config, 0)
    with torch.no_grad():
        attention.q_proj.weight.copy_(torch.eye(heads * head_dim))
        attention.q_proj.bias.zero_()
    x = _gaussian((1, len(positions), heads * head_dim))
    position_ids = torch.tensor(positions)[None]
    with torch.no_grad():
        attention(x, PhiRotaryEmbedding(config)(x, position_ids), None)
    hf = CAPTURED["query"]  # (1, heads, L, head_dim)
    ours_x = x.double().numpy().reshape(1, len(positions), heads, head_dim).transpose(0, 2, 1, 3)
    return Result(hf, partial_rotary.apply_partial_rotary(ours_x, positions, fraction, base),
                  atol=_partial_atol(ours_x, positions, int(head_dim * fraction), base),
                  rule="atol per element: " + TURN_RULE + " on the rotated dimensions; the others exact")


CAPTURED = {}


def _capturing_attention():
    """The name of an attention function (registered once with HF's AttentionInterface, as a user's own would be)
    that keeps the query and key a model's attention layer hands it, in CAPTURED, and returns zeros."""
    import torch
    from transformers import AttentionInterface

    def capture(module, query, key, value, attention_mask, **kwargs):
        CAPTURED.update(query=query.detach().clone(), key=key.detach().clone())
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], value.shape[-1], dtype=query.dtype), None

    AttentionInterface.register("posenc_capture", capture)
    return "posenc_capture"


PROPORTIONAL = {
    "llama-d8-p0.5": ("LlamaConfig, rope_type proportional: head_dim 8, partial_rotary_factor 0.5, theta 1e4, "
                      "positions 0..9", dict(head_dim=8, fraction=0.5, base=1e4, positions=list(range(10)))),
    "llama-d10-p0.3": ("head_dim 10, partial_rotary_factor 0.3 (int(3 // 2) = 1 pair turns), theta 100",
                       dict(head_dim=10, fraction=0.3, base=100.0, positions=[0, 1, 4, 9, 200])),
    "llama-d64-p1": ("head_dim 64, partial_rotary_factor 1 (every pair turns), theta 5e5, positions up to 4095",
                     dict(head_dim=64, fraction=1.0, base=5e5, positions=[0, 1, 17, 1000, 4095])),
}


def _proportional_atol(x, positions, fraction, base):
    dim = x.shape[-1]
    theta, error = _default_theta(dim, base)
    turning = int(fraction * dim // 2)
    theta[turning:], error[turning:] = 0.0, 0.0
    return _turn_atol(x, np.asarray(positions, dtype=float)[:, None] * theta, error)


@compares("partial_rotary.apply_proportional_rope",
          "transformers.modeling_rope_utils._compute_proportional_rope_parameters (LlamaRotaryEmbedding) + "
          "apply_rotary_pos_emb",
          "Partial RoPE: proportional (rope_type proportional)", PROPORTIONAL)
def proportional(head_dim, fraction, base, positions):
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    config = llama_config(head_dim, {"rope_type": "proportional", "rope_theta": base,
                                     "partial_rotary_factor": fraction})
    q = _gaussian((2, 2, len(positions), head_dim))
    cos, sin = LlamaRotaryEmbedding(config)(q, torch.tensor(positions)[None].expand(2, -1))
    hf, _ = apply_rotary_pos_emb(q, q, cos, sin)
    x = q.double().numpy()
    return Result(hf, partial_rotary.apply_proportional_rope(x, positions, fraction, base),
                  atol=_proportional_atol(x, positions, fraction, base),
                  rule="atol per element: " + TURN_RULE + " (angle 0 for the pairs that do not turn)")


GEMMA_4 = {
    "gemma-4-full": ("Gemma4TextConfig's full-attention layers as it defaults them: global_head_dim 512, "
                     "proportional, partial_rotary_factor 0.25 (64 of 256 pairs), theta 1e6; positions 0..7",
                     dict(positions=list(range(8)))),
    "gemma-4-full-far": ("the same, positions up to 131071", dict(positions=[0, 3, 4096, 65536, 131071])),
}


@compares("partial_rotary.apply_proportional_rope",
          "transformers.models.gemma4.modeling_gemma4.Gemma4TextRotaryEmbedding (layer_type full_attention) + "
          "apply_rotary_pos_emb",
          "Partial RoPE: proportional (Gemma 4's full-attention layers)", GEMMA_4)
def gemma4(positions, heads=2):
    """As Gemma4TextModel runs it: ``rotary_emb(hidden_states, position_ids, "full_attention")``, then in the
    attention layer ``apply_rotary_pos_emb(query, cos, sin, unsqueeze_dim=2)`` on (batch, L, heads, head_dim)."""
    import torch
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding, apply_rotary_pos_emb

    config = _json_config("Gemma4TextConfig", {"hidden_size": 64, "num_attention_heads": heads,
                                               "num_key_value_heads": 1, "num_hidden_layers": 6,
                                               "intermediate_size": 32})
    settings = config.rope_parameters["full_attention"]
    head_dim = config.per_layer_config["full_attention"].head_dim
    q = _gaussian((1, len(positions), heads, head_dim))
    cos, sin = Gemma4TextRotaryEmbedding(config)(q, torch.tensor(positions)[None], "full_attention")
    hf = apply_rotary_pos_emb(q, cos, sin, unsqueeze_dim=2).transpose(1, 2)
    x = q.transpose(1, 2).double().numpy()
    fraction, base = settings["partial_rotary_factor"], settings["rope_theta"]
    return Result(hf, partial_rotary.apply_proportional_rope(x, positions, fraction, base),
                  atol=_proportional_atol(x, positions, fraction, base),
                  rule="atol per element: " + TURN_RULE + " (angle 0 for the pairs that do not turn)")


# ---- DeepSeek's YaRN (posenc_solutions.deepseek_yarn) against DeepSeek-V2 and V3's code

DEEPSEEK_YARN = {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 32,
                 "beta_slow": 1, "rope_theta": 10000.0}
DEEPSEEK = {  # mscale, mscale_all_dim: None for absent; qk 128 + 64 as in V2 and V3
    "deepseek-v3": ("DeepSeek-V3 (DeepseekV3Config): factor 40, mscale 1, mscale_all_dim 1, qk_head_dim 128 + 64",
                    dict(model="DeepseekV3", factor=40.0, mscale=1.0, mscale_all_dim=1.0)),
    "deepseek-v2": ("DeepSeek-V2 (DeepseekV2Config): factor 40, mscale 0.707, mscale_all_dim 0.707",
                    dict(model="DeepseekV2", factor=40.0, mscale=0.707, mscale_all_dim=0.707)),
    "m1-all0.8": ("DeepseekV3Config, factor 40, mscale 1, mscale_all_dim 0.8",
                  dict(model="DeepseekV3", factor=40.0, mscale=1.0, mscale_all_dim=0.8)),
    "m0.707-all0": ("DeepseekV3Config, factor 40, mscale 0.707, mscale_all_dim 0 (unset)",
                    dict(model="DeepseekV3", factor=40.0, mscale=0.707, mscale_all_dim=0.0)),
    "m1-all-absent": ("DeepseekV3Config, factor 40, mscale 1, no mscale_all_dim",
                      dict(model="DeepseekV3", factor=40.0, mscale=1.0, mscale_all_dim=None)),
    "factor1": ("DeepseekV3Config, factor 1 (no extension), mscale 1, mscale_all_dim 1",
                dict(model="DeepseekV3", factor=1.0, mscale=1.0, mscale_all_dim=1.0)),
}


def _deepseek(model, factor, mscale, mscale_all_dim):
    """HF's cos-sin factor (the model's rotary embedding's attention_scaling, from _compute_yarn_parameters) and
    softmax scale (its attention layer's ``scaling``: yarn_apply_mscale), and the course's."""
    import importlib as imports

    import transformers

    rope_parameters = {**DEEPSEEK_YARN, "factor": factor}
    for key, value in (("mscale", mscale), ("mscale_all_dim", mscale_all_dim)):
        if value is not None:
            rope_parameters[key] = value
    config = getattr(transformers, f"{model}Config")(
        hidden_size=64, num_attention_heads=2, num_key_value_heads=2, q_lora_rank=16, kv_lora_rank=16,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, max_position_embeddings=163840,
        rope_parameters=rope_parameters)
    name = {"DeepseekV2": "deepseek_v2", "DeepseekV3": "deepseek_v3"}[model]
    module = imports.import_module(f"transformers.models.{name}.modeling_{name}")
    hf = (getattr(module, f"{model}RotaryEmbedding")(config).attention_scaling,
          getattr(module, f"{model}Attention")(config, 0).scaling)
    return hf, deepseek_yarn.deepseek_yarn_scales(factor, mscale, mscale_all_dim, 128 + 64)


@compares("deepseek_yarn.deepseek_yarn_scales",
          "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding.attention_scaling "
          "(_compute_yarn_parameters; DeepseekV2's for deepseek-v2)",
          "DeepSeek's YaRN: the factor on cos and sin", DEEPSEEK)
def deepseek_cos_sin(**kwargs):
    (hf, _), (ours, _) = _deepseek(**kwargs)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too")


@compares("deepseek_yarn.deepseek_yarn_scales:softmax_scale",
          "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention.scaling (yarn_apply_mscale; "
          "DeepseekV2's for deepseek-v2)",
          "DeepSeek's YaRN: the softmax scale", DEEPSEEK)
def deepseek_softmax(**kwargs):
    (_, hf), (_, ours) = _deepseek(**kwargs)
    return Result(hf, ours, rtol=4 * EPS64, rule="rtol 4 EPS64: HF computes it in Python floats too (another "
                                                 "order of the products)")


MSCALE = {
    "s40-m1": ("scale 40, mscale 1 (DeepSeek-V3)", dict(scale=40.0, mscale=1.0)),
    "s40-m0.707": ("scale 40, mscale 0.707 (DeepSeek-V2)", dict(scale=40.0, mscale=0.707)),
    "s4-m0.8": ("scale 4, mscale 0.8", dict(scale=4.0, mscale=0.8)),
    "s1-m1": ("scale 1 (no extension: 1)", dict(scale=1.0, mscale=1.0)),
    "s0.5-m2": ("scale 0.5 (below 1: 1)", dict(scale=0.5, mscale=2.0)),
    "s16-m0": ("scale 16, mscale 0", dict(scale=16.0, mscale=0.0)),
}


@compares("deepseek_yarn.yarn_mscale", "transformers.models.deepseek_v3.modeling_deepseek_v3.yarn_get_mscale",
          "DeepSeek's YaRN: the temperature", MSCALE)
def mscale_(scale, mscale):
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_get_mscale

    return Result(yarn_get_mscale(scale, mscale), deepseek_yarn.yarn_mscale(scale, mscale), rtol=4 * EPS64,
                  rule="rtol 4 EPS64: HF computes it in Python floats too")


# ---- per-layer plans (posenc_solutions.layer_plans) against Gemma 3's and Llama 4's configs and code

GEMMA3_LAYERS = {
    "gemma-3-1b": ("Gemma 3 1B: 26 layers, sliding_window_pattern 6", dict(sizes=[(26, 6)])),
    "gemma-3-4b": ("Gemma 3 4B: 34 layers, pattern 6", dict(sizes=[(34, 6)])),
    "gemma-3-12b": ("Gemma 3 12B: 48 layers, pattern 6", dict(sizes=[(48, 6)])),
    "gemma-3-27b": ("Gemma 3 27B: 62 layers, pattern 6", dict(sizes=[(62, 6)])),
    "n1-39-p1-9": ("every number of layers 1..39 with every pattern 1..9, one after the other",
                   dict(sizes=[(n, p) for n in range(1, 40) for p in range(1, 10)])),
}


@compares("layer_plans.gemma3_layer_types", "transformers.models.gemma3.configuration_gemma3.Gemma3TextConfig"
          "(num_hidden_layers, sliding_window_pattern).layer_types", "Per-layer plans: Gemma 3's layer types",
          GEMMA3_LAYERS)
def gemma3_types(sizes):
    hf, ours = [], []
    for layers, pattern in sizes:
        hf += _json_config("Gemma3TextConfig", {"num_hidden_layers": layers,
                                                "sliding_window_pattern": pattern}).layer_types
        ours += layer_plans.gemma3_layer_types(layers, pattern)
    hf_codes, our_codes = _codes(hf, ours)
    return Result(hf_codes, our_codes, rule=EXACT, hf_dtype="list of str")


GEMMA3_JSON_4B = {"head_dim": 256, "hidden_size": 2560, "num_attention_heads": 8, "num_hidden_layers": 6,
                  "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                  "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
GEMMA3_JSON_NESTED = {"head_dim": 8, "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 6,
                      "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.5, "rope_theta": 5e5},
                                          "sliding_attention": {"rope_type": "default", "rope_theta": 500.0}}}
GEMMA3_FREQ = {  # local, glob: the sliding and full layers' bases; factor: the full layers' linear factor
    "gemma-3-4b-sliding": ("Gemma 3 4B's config.json (head_dim 256, rope_local_base_freq 1e4): a sliding layer",
                           dict(config=GEMMA3_JSON_4B, layer_type="sliding_attention", local=1e4, glob=1e6,
                                factor=8.0)),
    "gemma-3-4b-full": ("Gemma 3 4B's: a full layer (theta 1e6, rope_scaling linear 8)",
                        dict(config=GEMMA3_JSON_4B, layer_type="full_attention", local=1e4, glob=1e6, factor=8.0)),
    "gemma-3-1b-full": ("Gemma 3 1B's (no rope_scaling): a full layer",
                        dict(config={**GEMMA3_JSON_4B, "rope_scaling": None}, layer_type="full_attention", local=1e4,
                             glob=1e6, factor=1.0)),
    "nested-d8-sliding": ("transformers 5 spelling, rope_parameters per layer type, head_dim 8: sliding (theta 500)",
                          dict(config=GEMMA3_JSON_NESTED, layer_type="sliding_attention", local=500.0, glob=5e5,
                               factor=2.5)),
    "nested-d8-full": ("the same: full (theta 5e5, linear 2.5)",
                       dict(config=GEMMA3_JSON_NESTED, layer_type="full_attention", local=500.0, glob=5e5,
                            factor=2.5)),
}


@compares("layer_plans.gemma3_layer_inv_freq",
          "transformers.models.gemma3.modeling_gemma3.Gemma3RotaryEmbedding.<layer_type>_inv_freq",
          "Per-layer plans: Gemma 3's frequencies by layer type", GEMMA3_FREQ)
def gemma3_frequencies(config, layer_type, local, glob, factor):
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    rotary = Gemma3RotaryEmbedding(_json_config("Gemma3TextConfig", config))
    base = local if layer_type == "sliding_attention" else glob
    return Result(getattr(rotary, f"{layer_type}_inv_freq"),
                  layer_plans.gemma3_layer_inv_freq(layer_type, config["head_dim"], local, glob, factor),
                  rtol=inv_freq_rtol(base), rule=inv_freq_rule(base))


IROPE = {
    "llama-4-scout": ("Llama 4 Scout and Maverick: 48 layers, no_rope_layer_interval 4", dict(sizes=[(48, 4)])),
    "n1-49-i1-9": ("every number of layers 1..49 with every interval 1..9, one after the other",
                   dict(sizes=[(n, i) for n in range(1, 50) for i in range(1, 10)])),
}


def _irope(sizes, read):
    hf, ours = [], []
    for layers, interval in sizes:
        config = _json_config("Llama4TextConfig", {"num_hidden_layers": layers, "no_rope_layer_interval": interval})
        hf += read(config)
        ours += layer_plans.irope_uses_rope(layers, interval).tolist()
    return Result(np.array(hf), np.array(ours), rule=EXACT, hf_dtype="list (Python)")


@compares("layer_plans.irope_uses_rope", "transformers.models.llama4.configuration_llama4.Llama4TextConfig"
          ".no_rope_layers", "Per-layer plans: Llama 4's RoPE and NoPE layers", IROPE)
def irope(sizes):
    return _irope(sizes, lambda config: list(config.no_rope_layers))


@compares("layer_plans.irope_uses_rope:layer_types", "transformers.models.llama4.configuration_llama4."
          "Llama4TextConfig.layer_types == 'chunked_attention'", "Per-layer plans: Llama 4's chunked layers", IROPE)
def irope_types(sizes):
    return _irope(sizes, lambda config: [kind == "chunked_attention" for kind in config.layer_types])


CHUNKED_SWEEP = {
    "sdpa-mask-Lk1-16": ("masking_utils.sdpa_mask(chunked_causal_mask_function(c)) for every Lk 1..16, Lq 1..Lk "
                         "(the last Lq positions: q_offset Lk - Lq), chunk 1 2 3 5 8 30",
                         dict(lengths=range(1, 17), chunks=(1, 2, 3, 5, 8, 30))),
}


@compares("layer_plans.chunked_causal_mask", "transformers.masking_utils.sdpa_mask (chunked_causal_mask_function)",
          "Per-layer plans: Llama 4's chunked mask", CHUNKED_SWEEP)
def chunked_sweep(lengths, chunks):
    import torch
    from transformers.masking_utils import chunked_causal_mask_function, sdpa_mask

    hf, ours = [], []
    for keys in lengths:
        for queries in range(1, keys + 1):
            for chunk in chunks:
                mask = sdpa_mask(batch_size=1, q_length=queries, kv_length=keys, q_offset=keys - queries,
                                 mask_function=chunked_causal_mask_function(chunk, torch.zeros(1, dtype=torch.long)),
                                 allow_is_causal_skip=False)
                hf.append(mask[0, 0].flatten())
                ours.append(layer_plans.chunked_causal_mask(np.arange(keys - queries, keys), np.arange(keys),
                                                            chunk).ravel())
    return Result(torch.cat(hf), np.concatenate(ours), rule=EXACT)


CHUNKED_MODEL = {  # prompt, new: tokens decoded one by one after it
    "llama-4-chunk4-P6-decode6": ("Llama4TextConfig (attention_chunk_size 4) with a DynamicCache: a prompt of 6, "
                                  "then 6 tokens decoded one by one", dict(chunk=4, prompt=6, new=6)),
    "llama-4-chunk4-P9-decode7": ("the same, a prompt of 9, then 7 tokens", dict(chunk=4, prompt=9, new=7)),
    "llama-4-chunk3-P2-decode8": ("attention_chunk_size 3, a prompt of 2, then 8 tokens",
                                  dict(chunk=3, prompt=2, new=8)),
}


@compares("layer_plans.chunked_causal_mask", "transformers.masking_utils.create_chunked_causal_mask (with "
          "Llama4TextConfig and a DynamicCache)", "Per-layer plans: Llama 4's chunked mask, served", CHUNKED_MODEL)
def chunked_served(chunk, prompt, new):
    """As Llama4TextModel builds its chunked layers' mask, on the prompt and then at each decoded token, with its
    cache (a chunked layer's keeps only the last keys: the mask's columns are the keys at ``kv_offset`` on, from
    ``get_mask_sizes``)."""
    import torch
    from transformers import DynamicCache
    from transformers.masking_utils import create_chunked_causal_mask

    config = _json_config("Llama4TextConfig", {"num_hidden_layers": 4, "attention_chunk_size": chunk,
                                               "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
                                               "head_dim": 8, "intermediate_size": 16, "intermediate_size_mlp": 16})
    config._attn_implementation = "sdpa"
    cache = DynamicCache(config=config)
    layer = config.layer_types.index("chunked_attention")
    hf, ours = [], []
    steps = [(0, prompt)] + [(t, t + 1) for t in range(prompt, prompt + new)]
    for start, stop in steps:
        queries = torch.arange(start, stop)
        mask = create_chunked_causal_mask(config, torch.zeros(1, stop - start, 16), None, cache,
                                          position_ids=queries[None], allow_is_causal_skip=False)
        length, offset = cache.layers[layer].get_mask_sizes(stop - start) if start else (stop, 0)
        hf.append(mask[0, 0].flatten())
        ours.append(layer_plans.chunked_causal_mask(queries.numpy(), np.arange(offset, offset + length), chunk).ravel())
        for index in range(config.num_hidden_layers):
            cache.update(torch.zeros(1, 2, stop - start, 8), torch.zeros(1, 2, stop - start, 8), index)
    return Result(torch.cat(hf), np.concatenate(ours), rule=EXACT)


NOPE = {  # floor_scale, attn_scale; past: tokens already in the cache; new: tokens in this forward
    "llama-4-past8185": ("Llama 4's floor_scale 8192, attn_scale 0.1: 10 tokens after a cache of 8185 (crossing "
                         "position + 1 = 8192)", dict(floor_scale=8192, attn_scale=0.1, past=8185, new=10)),
    "llama-4-past24570": ("the same, 10 tokens after 24570 (crossing 3 x 8192)",
                          dict(floor_scale=8192, attn_scale=0.1, past=24570, new=10)),
    "f4-a0.3-L20": ("floor_scale 4, attn_scale 0.3, 20 tokens, no cache", dict(floor_scale=4, attn_scale=0.3, past=0,
                                                                                 new=20)),
    "f3-a0.5-past5": ("floor_scale 3, attn_scale 0.5, 12 tokens after 5", dict(floor_scale=3, attn_scale=0.5, past=5,
                                                                                new=12)),
}


@compares("layer_plans.nope_attention_scale",
          "transformers.models.llama4.modeling_llama4.Llama4TextAttention.forward (attn_temperature_tuning, a NoPE "
          "layer)", "Per-layer plans: Llama 4's NoPE temperature", NOPE)
def nope(floor_scale, attn_scale, past, new, head_dim=8):
    """As Llama4TextModel runs a NoPE layer (layer 3 of 4): its forward, with a DynamicCache holding `past` tokens,
    the identity as q_proj and inputs of ones, so the query it hands to the attention function (read by a
    registered one) is the scale itself, at positions past .. past + new - 1."""
    import torch
    from transformers import DynamicCache
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention

    config = _json_config("Llama4TextConfig", {"num_hidden_layers": 4, "hidden_size": head_dim,
                                               "num_attention_heads": 1, "num_key_value_heads": 1,
                                               "head_dim": head_dim, "floor_scale": floor_scale,
                                               "attn_scale": attn_scale, "intermediate_size": 16,
                                               "intermediate_size_mlp": 16})
    config._attn_implementation = _capturing_attention()
    layer = 3
    if config.no_rope_layers[layer]:
        raise RuntimeError(f"layer {layer} uses RoPE: no_rope_layers is {config.no_rope_layers}")
    attention = Llama4TextAttention(config, layer)
    with torch.no_grad():
        attention.q_proj.weight.copy_(torch.eye(head_dim))
    cache = DynamicCache(config=config)
    if past:
        for index in range(config.num_hidden_layers):
            cache.update(torch.zeros(1, 1, past, head_dim), torch.zeros(1, 1, past, head_dim), index)
    with torch.no_grad():
        attention(torch.ones(1, new, head_dim), None, None, cache=cache)
    hf = CAPTURED["query"][0, 0, :, 0]
    positions = np.arange(past, past + new)
    ours = layer_plans.nope_attention_scale(positions, floor_scale, attn_scale)
    logarithm = np.abs(attn_scale * np.log1p(np.floor((positions + 1.0) / floor_scale)))
    return Result(hf, ours, atol=EPS32 * (2 * logarithm + np.abs(ours) / 2),
                  rule="atol EPS32 (2 |a ln(1 + n)| + |tau| / 2): float32's log1p (1 ulp), a rounded to float32, "
                       "the product and the sum")


# ---- tiled attention (posenc_solutions.tiled_attention) against HF's sdpa attention with a position bias

TILED = {  # queries Lq (the last of the Lk positions), keys Lk; big: the scale of q and k
    "prefill-L12-tile4": ("Lq = Lk = 12, d 8, dv 4, tiles of 4, causal, ALiBi slope 0.25",
                          dict(queries=12, keys=12, tile=4, causal=True, slope=0.25)),
    "decode-Lk13-tile5": ("one query at position 12 of Lk 13 (decoding), tiles of 5",
                          dict(queries=1, keys=13, tile=5, causal=True, slope=0.5)),
    "last5-Lk17-tile3": ("the last 5 of 17 positions (a chunk with a KV cache), tiles of 3",
                         dict(queries=5, keys=17, tile=3, causal=True, slope=0.125)),
    "bidirectional-L9-tile2": ("Lq = Lk = 9, not causal, tiles of 2", dict(queries=9, keys=9, tile=2, causal=False,
                                                                          slope=0.25)),
    "one-tile-L10": ("Lq = Lk = 10 in one tile of 64", dict(queries=10, keys=10, tile=64, causal=True, slope=0.25)),
    "logits-1e4": ("q and k times 100 (logits near 1e4), Lq = Lk = 16, tiles of 5",
                   dict(queries=16, keys=16, tile=5, causal=True, slope=0.25, big=100.0)),
    "L64-tile16": ("Lq = Lk = 64, tiles of 16, slope 1/16", dict(queries=64, keys=64, tile=16, causal=True,
                                                                 slope=0.0625)),
}


@compares("tiled_attention.tiled_biased_attention",
          "transformers.integrations.sdpa_attention.sdpa_attention_forward (position_bias, masking_utils.sdpa_mask) "
          "-> torch scaled_dot_product_attention", "Tiled attention with an ALiBi bias", TILED)
def tiled(queries, keys, tile, causal, slope, big=1.0, d=8, dv=4):
    """HF's SDPA attention as a model with a position bias calls it (T5's and ALiBi models' path): the bias as
    ``position_bias``, the causal mask of a KV cache from ``sdpa_mask`` (the queries at the last positions); float64
    here, as the course's. The bias is ALiBi's, ``-m (p_i - k_j)``, written out."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import sdpa_mask

    generator = torch.Generator().manual_seed(queries * 100 + keys)
    q = torch.randn(1, 1, queries, d, generator=generator, dtype=torch.float64) * big
    k = torch.randn(1, 1, keys, d, generator=generator, dtype=torch.float64) * big
    v = torch.randn(1, 1, keys, dv, generator=generator, dtype=torch.float64)
    query_positions, key_positions = torch.arange(keys - queries, keys), torch.arange(keys)
    bias = -slope * (query_positions[:, None] - key_positions[None, :]).double()
    mask = sdpa_mask(batch_size=1, q_length=queries, kv_length=keys, q_offset=keys - queries,
                     allow_is_causal_skip=False) if causal else None
    module = torch.nn.Module()
    module.is_causal = causal
    hf, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=d ** -0.5, is_causal=causal,
                                   position_bias=bias[None, None])
    q, k, v = (t[0, 0].numpy() for t in (q, k, v))
    ours = tiled_attention.tiled_biased_attention(
        q, k, v, lambda qp, kp: tiled_attention.alibi_tile_bias(slope, qp, kp), tile, causal=causal)
    logits = np.abs(q) @ np.abs(k).T / np.sqrt(d) + np.abs(bias.numpy())
    atol = 2 * EPS64 * np.abs(v).max() * (2 * (d + 2) * logits.max(axis=1) + 2 * keys + 6)
    return Result(hf[0, :, 0], ours, atol=atol[:, None] * np.ones(dv),
                  rule="atol per query, both sides' float64 rounding: 2 EPS64 max|v| (2 (d + 2) max_j (|q_i| . |k_j| "
                       "/ sqrt d + |b_ij|) + 2 Lk + 6)")


# ---- M-RoPE (posenc_solutions.mrope) against Qwen2-VL

#: Images, and videos of at most max(h, w) frames only: past that, HF 5.24's get_rope_index starts the next segment
#: at max(h, w) and the course (as transformers 4.x) at max(t, h, w) (mrope_position_ids' docstring).
MROPE_IDS = {  # segments: ("text", n) or ("image", t, h, w) in LLM tokens (after the 2 x 2 merge)
    "text-image-text": ("text 3, an image of 2 x 3 tokens, text 2", dict(segments=[("text", 3), ("image", 1, 2, 3),
                                                                                  ("text", 2)])),
    "two-images": ("text 2, image 4 x 3, text 3, image 2 x 2, text 1", dict(segments=[
        ("text", 2), ("image", 1, 4, 3), ("text", 3), ("image", 1, 2, 2), ("text", 1)])),
    "image-first": ("an image of 3 x 3 first, then text 4", dict(segments=[("image", 1, 3, 3), ("text", 4)])),
    "video-t2-h3-w2": ("text 2, a video of 2 frames x 3 x 2 (t <= max(h, w)), text 3",
                       dict(segments=[("text", 2), ("image", 2, 3, 2), ("text", 3)])),
    "qwen2-vl-448x672": ("text 5, a 448 x 672 image (Qwen2-VL: 32 x 48 patches of 14, merged 2 x 2: 16 x 24), "
                         "text 7", dict(segments=[("text", 5), ("image", 1, 16, 24), ("text", 7)])),
    "random-40": ("40 random sequences of text, images and videos with t <= max(h, w) (seed 0), one after the "
                  "other", dict(segments=None)),
}
MERGE = 2  # Qwen2-VL's spatial_merge_size


def _random_segments(generator):
    """A random sequence of text and images or videos whose frames are at most max(h, w) (HF 5.24 and the course
    differ past that: mrope_position_ids' docstring)."""
    segments = []
    for _ in range(int(generator.integers(1, 5))):
        segments.append(("text", int(generator.integers(1, 6))))
        h, w = int(generator.integers(1, 5)), int(generator.integers(1, 5))
        segments.append(("image", int(generator.integers(1, max(h, w) + 1)), h, w))
    if generator.random() < 0.5:
        segments.append(("text", int(generator.integers(1, 6))))
    return segments[1:] if generator.random() < 0.3 else segments


def _qwen2_vl_model():
    """A tiny Qwen2VLModel (random weights): get_rope_index reads its config's spatial_merge_size only."""
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    config = Qwen2VLConfig(text_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                            num_attention_heads=2, num_key_value_heads=1, vocab_size=100),
                           vision_config=dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2,
                                              spatial_merge_size=MERGE))
    return Qwen2VLModel(config)


def _rope_index(model, segments):
    """HF's position ids for one sequence: ``model.get_rope_index`` with the token types (0 text, 1 image, 2
    video: more than one frame) and the grids in patches (times the merge)."""
    import torch

    types, images, videos = [], [], []
    for segment in segments:
        if segment[0] == "text":
            types += [0] * segment[1]
            continue
        t, h, w = segment[1:]
        types += [1 if t == 1 else 2] * (t * h * w)
        (images if t == 1 else videos).append([t, h * MERGE, w * MERGE])
    position_ids, _ = model.get_rope_index(torch.zeros(1, len(types), dtype=torch.long),
                                           torch.tensor([types], dtype=torch.int),
                                           image_grid_thw=torch.tensor(images) if images else None,
                                           video_grid_thw=torch.tensor(videos) if videos else None)
    return position_ids[:, 0]


@compares("mrope.mrope_position_ids", "transformers.models.qwen2_vl.modeling_qwen2_vl.Qwen2VLModel.get_rope_index",
          "M-RoPE: Qwen2-VL's position ids", MROPE_IDS)
def mrope_ids(segments):
    import torch

    model = _qwen2_vl_model()
    generator = np.random.default_rng(0)
    sequences = [segments] if segments else [_random_segments(generator) for _ in range(40)]
    hf = torch.cat([_rope_index(model, s) for s in sequences], dim=1)
    ours = np.concatenate([mrope.mrope_position_ids(s) for s in sequences], axis=1)
    return Result(hf, ours, rule=EXACT)


QWEN2_VL_448 = [("text", 5), ("image", 1, 16, 24), ("text", 7)]
MROPE_TURN = {  # offset: added to every position id (as after a long prompt)
    "qwen2-vl-7b": ("Qwen2-VL-7B (head_dim 128, mrope_section 16 24 24, theta 1e6), text 5, a 16 x 24 image, text 7",
                    dict(head_dim=128, section=(16, 24, 24), base=1e6, segments=QWEN2_VL_448, offset=0)),
    "qwen2-vl-7b-far": ("the same, every position id + 5000",
                        dict(head_dim=128, section=(16, 24, 24), base=1e6, segments=QWEN2_VL_448, offset=5000)),
    "d8-section-0-3-1": ("head_dim 8, mrope_section 0 3 1 (no temporal pairs), theta 1e4",
                         dict(head_dim=8, section=(0, 3, 1), base=1e4, segments=[
                             ("text", 2), ("image", 2, 3, 2), ("text", 2)], offset=0)),
    "d12-text-only": ("head_dim 12, mrope_section 2 2 2, text only (three equal rows: plain RoPE)",
                      dict(head_dim=12, section=(2, 2, 2), base=1e4, segments=[("text", 9)], offset=0)),
}


@compares("mrope.apply_mrope", "transformers.models.qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding "
          "(recomposition_frequencies) + apply_rotary_pos_emb", "M-RoPE: the rotation", MROPE_TURN)
def mrope_turn(head_dim, section, base, segments, offset, heads=2):
    """As Qwen2VLModel's text model runs it: cos, sin = rotary_emb(hidden, position_ids of shape (3, batch, L)),
    then apply_rotary_pos_emb on (batch, heads, L, head_dim), float32."""
    import torch
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding, apply_rotary_pos_emb

    positions = mrope.mrope_position_ids(segments) + offset
    config = Qwen2VLTextConfig(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=heads,
                               rope_parameters={"rope_type": "default", "rope_theta": base,
                                                "mrope_section": list(section)})
    q = _gaussian((1, heads, positions.shape[1], head_dim))
    cos, sin = Qwen2VLRotaryEmbedding(config)(q, torch.tensor(positions)[:, None, :])
    hf, _ = apply_rotary_pos_emb(q, q, cos, sin)
    x = q.double().numpy()
    theta, error = _default_theta(head_dim, base)
    rows = np.repeat(np.arange(3), section)
    angle = positions[rows].T * theta
    return Result(hf, mrope.apply_mrope(x, positions, section, base), atol=_turn_atol(x, angle, error),
                  rule="atol per element: " + TURN_RULE + ", p the id of the pair's section")


# ---- Swin V2's continuous position bias (posenc_solutions.swin_v2) against Swinv2SelfAttention

SWIN = {  # window (Wh, Ww), pretrained window (0 0: none)
    "swinv2-tiny-w8": ("swinv2-tiny-patch4-window8-256: window 8 x 8", dict(window=(8, 8), pretrained=(0, 0))),
    "swinv2-base-w16-from-12": ("swinv2-base-patch4-window12to16-192to256: window 16, pretrained 12",
                                dict(window=(16, 16), pretrained=(12, 12))),
    "swinv2-large-w24-from-12": ("swinv2-large-patch4-window12to24-192to384: window 24, pretrained 12",
                                 dict(window=(24, 24), pretrained=(12, 12))),
    "w3x5": ("a 3 x 5 window", dict(window=(3, 5), pretrained=(0, 0))),
    "w4x6-from-3x5": ("a 4 x 6 window, pretrained 3 x 5", dict(window=(4, 6), pretrained=(3, 5))),
}
#: The bias also on a 1 x 1 window (a last stage of one token); its table is the single offset 0 (0 whatever the
#: divisor, so not a comparison that can fail). A side of 1 beside a longer one differs: swin_v2's docstring.
SWIN_BIAS = {**SWIN, "w1x1": ("a 1 x 1 window", dict(window=(1, 1), pretrained=(0, 0)))}


def _swin_module(window, pretrained, heads=3):
    from transformers import Swinv2Config
    from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention

    return Swinv2SelfAttention(Swinv2Config(), dim=heads * 4, num_heads=heads, window_size=list(window),
                               pretrained_window_size=list(pretrained))


def _table_atol(table):
    """HF's table in float32: u = 8 delta / (S - 1) and |u| + 1 a rounding each (log2 turns them into at most
    EPS32 / ln 2), log2 one ulp, the division by 3 a rounding: EPS32 (1.5 |v| + 0.5) for v = log2(|u| + 1) / 3."""
    return EPS32 * (1.5 * np.abs(table) + 0.5)


@compares("swin_v2.swin_v2_relative_coords_table",
          "transformers.models.swinv2.modeling_swinv2.Swinv2SelfAttention.relative_coords_table "
          "(create_coords_table_and_index)", "Swin V2: the log-spaced coordinates", SWIN)
def swin_table(window, pretrained):
    hf = _swin_module(window, pretrained).relative_coords_table[0]
    ours = swin_v2.swin_v2_relative_coords_table(*window, *pretrained)
    return Result(hf, ours, atol=_table_atol(ours),
                  rule="atol EPS32 (1.5 |v| + 0.5): float32's division, + 1, log2 and / 3")


ACTIVE = 16  #: hidden units of the bias MLP connected to its output (of 512)


@compares("swin_v2.swin_v2_position_bias",
          "transformers.models.swinv2.modeling_swinv2.Swinv2SelfAttention.forward (continuous_position_bias_mlp, "
          "relative_position_index, 16 sigmoid)", "Swin V2: the position bias", SWIN_BIAS)
def swin_bias(window, pretrained, heads=3):
    """As Swinv2Layer runs it: the module's forward, with query and key weights 0 so that its scores are 0, and
    the bias it adds to them read where it hands them to the softmax. The MLP's weights are random, with only
    ACTIVE of its 512 hidden units connected to the output, so that float32's sums have few terms and a sharp
    bound."""
    import torch

    module = _swin_module(window, pretrained, heads)
    first, second = module.continuous_position_bias_mlp[0], module.continuous_position_bias_mlp[2]
    generator = torch.Generator().manual_seed(sum(window) * 100 + sum(pretrained))
    with torch.no_grad():
        first.weight.copy_(torch.randn(first.weight.shape, generator=generator))
        first.bias.copy_(torch.randn(first.bias.shape, generator=generator))
        second.weight.zero_()
        second.weight[:, :ACTIVE] = 0.3 * torch.randn(heads, ACTIVE, generator=generator)
        for linear in (module.query, module.key):
            linear.weight.zero_()
            if linear.bias is not None:
                linear.bias.zero_()
    tokens = window[0] * window[1]
    scores, softmax = [], torch.nn.functional.softmax

    def recording_softmax(input, *args, **kwargs):
        scores.append(input.detach().clone())
        return softmax(input, *args, **kwargs)

    torch.nn.functional.softmax = recording_softmax
    try:
        with torch.no_grad():
            module(_gaussian((1, tokens, heads * 4)))
    finally:
        torch.nn.functional.softmax = softmax
    if len(scores) != 1:
        raise RuntimeError(f"Swinv2SelfAttention.forward called softmax {len(scores)} times, not once")
    w1 = first.weight.detach().double().numpy().T
    b1 = first.bias.detach().double().numpy()
    w2 = second.weight.detach().double().numpy().T
    table = swin_v2.swin_v2_relative_coords_table(*window, *pretrained)
    ours = swin_v2.swin_v2_position_bias(table, w1, b1, w2, *window)
    # the tolerance: the MLP's value per offset and head (before the sigmoid), then through 16 sigmoid
    coords = table.reshape(-1, 2)
    hidden_terms = np.abs(coords[:, :1] * w1[0]) + np.abs(coords[:, 1:] * w1[1]) + np.abs(b1)
    hidden = np.maximum(coords @ w1 + b1, 0)
    hidden_error = EPS32 * (2 * hidden_terms + np.abs(w1[0]) * _table_atol(coords[:, :1]) / EPS32
                            + np.abs(w1[1]) * _table_atol(coords[:, 1:]) / EPS32)
    value_error = hidden_error @ np.abs(w2) + ACTIVE * EPS32 * (np.abs(hidden) @ np.abs(w2))
    rows, cols = np.divmod(np.arange(tokens), window[1])
    index = ((rows[:, None] - rows[None, :] + window[0] - 1) * (2 * window[1] - 1)
             + cols[:, None] - cols[None, :] + window[1] - 1)
    sigma = ours / 16
    atol = 16 * sigma * (1 - sigma) * np.transpose(value_error[index], (2, 0, 1)) + 2 * EPS32 * ours
    return Result(scores[0][0], ours, atol=atol,
                  rule=f"atol per element 16 s(1 - s) err(T) + 2 EPS32 B: the MLP in float32 ({ACTIVE} terms, the "
                       "table's error), then the sigmoid")


# ---- running them

def perturb(name, by=PERTURBATION):
    """Replace posenc_solutions' `name` (``module.function``) by a deliberately wrong copy: its numbers times
    (1 + by), and its exact values changed as little as they can be: integers + 1, booleans negated, strings
    with a character appended (in tuples, lists and dicts too)."""
    module_name, _, function_name = name.partition(".")
    module = importlib.import_module(f"posenc_solutions.{module_name}")
    right = getattr(module, function_name)

    def scaled(value):
        if isinstance(value, (tuple, list)):
            return type(value)(scaled(v) for v in value)
        if isinstance(value, dict):
            return {key: scaled(v) for key, v in value.items()}
        if value is None:
            return None
        if isinstance(value, str):
            return value + "~"
        array = np.asarray(value)
        if array.dtype == bool:
            return ~array
        if array.dtype.kind in "iu":
            return array + 1
        return value * (1 + by)

    def wrong(*args, **kwargs):
        if sys._getframe(1).f_globals.get("__name__", "").startswith("posenc_solutions."):
            return right(*args, **kwargs)  # the course calling its own function (a helper): the right one
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
        dtype = result.hf_dtype or dtype
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
        allowed = (f"rtol {tolerance['rtol']:.2g}" if tolerance["rtol"] else
                   f"atol <= {tolerance['atol']:.2g}" if tolerance["atol"] else "exact")
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
