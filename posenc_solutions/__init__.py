"""Reference solutions for the posenc course: one module per chapter.

Every function of the exercises' contract (``docs/contract.md``: its rules, and these functions' docstrings) is
re-exported here.
"""

from .sinusoidal import sinusoidal_row, sinusoidal_table
from .learned import (
    add_positions,
    learned_table_parameters,
    position_parameter_count,
    interpolate_position_table,
)
from .relative import (
    relative_position_matrix,
    causal_mask,
    clipped_relative_bias,
    t5_relative_position_bucket,
    t5_relative_bias,
)
from .rope import (
    rope_frequencies,
    apply_rope,
    pair_norms,
    rotation_2d,
    rope_score_2d,
    rope_score_from_offset,
)
from .alibi import alibi_slopes, alibi_bias, masked_softmax, alibi_attention
from .decoding import (
    position_ids_from_attention_mask,
    decode_position_ids,
    first_bad_decode_step,
)
from .diagnostics import (
    mean_attention_distance,
    attention_entropy,
    shift_invariance_gap,
    needle_attention_by_depth,
)

#: The contract's functions, grouped by exercise, in the order the notebook teaches them.
EXERCISES = {
    "ex01": ("sinusoidal_row", "sinusoidal_table"),
    "ex02": ("add_positions",),
    "ex03": ("relative_position_matrix", "causal_mask"),
    "ex04": ("clipped_relative_bias", "t5_relative_position_bucket", "t5_relative_bias"),
    "ex05": ("rope_frequencies", "apply_rope", "pair_norms"),
    "ex06": ("rotation_2d", "rope_score_2d", "rope_score_from_offset"),
    "ex07": ("alibi_slopes", "alibi_bias", "masked_softmax", "alibi_attention"),
    "ex08": ("learned_table_parameters", "position_parameter_count", "interpolate_position_table"),
    "ex09": ("position_ids_from_attention_mask", "decode_position_ids", "first_bad_decode_step"),
    "ex10": (
        "mean_attention_distance",
        "attention_entropy",
        "shift_invariance_gap",
        "needle_attention_by_depth",
    ),
}


# The second assignment, posenc-advanced: its functions are exported here too, and listed by exercise.
from .shaw import (
    shaw_relative_vectors,
    shaw_logits,
    shaw_attention,
    left_weights,
    direction_task_solution,
    relative_logits_naive,
    skew,
    relative_logits_skewed,
)
from .transformer_xl import transformer_xl_relative_encodings, rel_shift, transformer_xl_scores
from .swin import swin_relative_position_index, swin_relative_bias
from .rope_scaling import linear_scaled_inv_freq, dynamic_ntk_inv_freq, yarn_inv_freq, llama3_inv_freq
from .rope_layouts import apply_rope_half_split, interleaved_to_half_split, permute_for_half_split
from .serving import packed_position_ids, packed_causal_mask, sliding_window_positions, attention_sink_positions

#: The second assignment's functions (``posenc-advanced``), grouped by exercise.
ADVANCED_EXERCISES = {
    "ex01": ("shaw_relative_vectors", "shaw_logits", "shaw_attention"),
    "ex02": ("left_weights", "direction_task_solution"),
    "ex03": ("relative_logits_naive", "skew", "relative_logits_skewed"),
    "ex04": ("transformer_xl_relative_encodings", "rel_shift", "transformer_xl_scores"),
    "ex05": ("swin_relative_position_index", "swin_relative_bias"),
    "ex06": ("linear_scaled_inv_freq", "dynamic_ntk_inv_freq", "yarn_inv_freq", "llama3_inv_freq"),
    "ex07": ("apply_rope_half_split", "interleaved_to_half_split", "permute_for_half_split"),
    "ex08": ("packed_position_ids", "packed_causal_mask", "sliding_window_positions", "attention_sink_positions"),
}

__all__ = [name for table in (EXERCISES, ADVANCED_EXERCISES) for names in table.values() for name in names] + [
    "EXERCISES", "ADVANCED_EXERCISES"]


# The third assignment, posenc-current: the position schemes that 2025-2026 models ship.
from .rope_config import rope_parameters_from_config, llama3_frequency_bands
from .longrope import longrope_attention_factor, longrope_inv_freq
from .dynamic_cache import rotation_lengths, cached_keys, stale_keys
from .partial_rotary import apply_partial_rotary, apply_proportional_rope
from .deepseek_yarn import yarn_mscale, deepseek_yarn_scales

#: The third assignment's functions (``posenc-current``), grouped by exercise.
CURRENT_EXERCISES = {
    "ex01": ("rope_parameters_from_config", "llama3_frequency_bands"),
    "ex02": ("longrope_attention_factor", "longrope_inv_freq"),
    "ex03": ("rotation_lengths", "cached_keys", "stale_keys"),
    "ex04": ("apply_partial_rotary", "apply_proportional_rope"),
    "ex05": ("yarn_mscale", "deepseek_yarn_scales"),
    "ex06": ("gemma3_layer_types", "gemma3_layer_inv_freq", "chunked_causal_mask", "nope_attention_scale"),
    "ex07": ("mrope_position_ids", "apply_mrope"),
    "ex08": ("swin_v2_relative_coords_table", "swin_v2_position_bias"),
    "ex09": ("online_softmax_update", "alibi_tile_bias", "tiled_biased_attention"),
}

__all__ += [name for names in CURRENT_EXERCISES.values() for name in names] + ["CURRENT_EXERCISES"]
from .layer_plans import (gemma3_layer_types, gemma3_layer_inv_freq, irope_uses_rope, chunked_causal_mask,
                          nope_attention_scale)
from .mrope import mrope_position_ids, apply_mrope
from .swin_v2 import swin_v2_relative_coords_table, swin_v2_position_bias
from .tiled_attention import online_softmax_update, tiled_biased_attention, alibi_tile_bias
