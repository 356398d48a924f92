"""Each mistake an exercise names, as a wrong answer, and what it costs (posenc_course/authoring/rubric.py).

``NAMED[assignment][exercise]`` lists, in the order of the exercise's *Common mistakes* list, the label of the
wrong answer (in the assignment's ``WRONG`` table, tests/unit/test_answers_in_process.py: ``TABLES``) that makes
each one. ``python -m tests.helpers.named_mistakes`` (``make mistakes-table``) measures each, in this process
through the real judge, and writes the docs' table, docs/course/named-mistakes.md.
"""

import collections
import sys
from pathlib import Path

from posenc_course.authoring.dryrun import scores_against_reference
from posenc_course.authoring.rubric import NAMED_MISTAKE_SHARE, costs_table, least_share, named_mistakes
from posenc_course.layout import ADVANCED, ASSIGNMENT, CURRENT, ROOT, exercise_of, source_notebook
from posenc_course.submissions import make_submission

from . import advanced_answers, current_answers, wrong_solutions

#: ``{assignment: {exercise: [wrong answer's label, ...]}}``, each list in the order of the exercise's list.
NAMED = {
    ASSIGNMENT: {
        "ex01": ["concat_layout", "exponent_i_over_d"],
        "ex02": ["no_range_check", "range_message_without_length"],
        "ex03": ["key_minus_query", "strict_causal"],
        "ex04": ["t5_bias_query_minus_key", "t5_no_cap", "t5_round_not_floor", "t5_warns_at_distance_0",
                 "shaw_no_clipping"],
        "ex05": ["rope_half_split", "rope_clockwise", "rope_t_over_d", "rope_ignores_positions"],
        "ex06": ["offset_query_minus_key"],
        "ex07": ["alibi_positive_bias", "slopes_not_power_of_two", "mask_after_softmax", "max_includes_masked",
                 "unstable_softmax"],
        "ex08": ["interpolate_not_endpoint_aligned", "interpolate_nearest_row", "t5_table_per_layer",
                 "shaw_per_head"],
        "ex09": ["padding_counted", "decode_from_padded_length", "decode_off_by_one",
                 "decode_same_id_for_every_new_token"],
        "ex10": ["entropy_in_bits", "entropy_nan_for_zeros", "distance_summed_over_queries", "needle_floor"],
    },
    ADVANCED: {
        "ex01": ["vectors_paper_sign", "vectors_no_clip", "attention_no_value_term", "attention_values_read_with_K",
                 "logits_position_unscaled", "attention_mask_after_softmax", "attention_unstable_softmax",
                 "logits_2d_only", "attention_scales_q_in_place"],
        "ex02": ["left_weights_content_only", "left_weights_rows_swapped", "left_weights_no_scale",
                 "left_weights_accepts_both", "direction_one_coordinate", "direction_too_large"],
        "ex03": ["skew_wrong_way", "skewed_descending", "skewed_no_clip", "skew_off_by_one", "skew_2d_only"],
        "ex04": ["txl_ascending_encoding_rows", "txl_interleaved_sin_cos", "txl_u_and_v_swapped",
                 "txl_query_i_at_position_i", "txl_distance_key_minus_query", "txl_no_future_mask",
                 "txl_present_key_masked", "txl_no_scale", "txl_only_2d_inputs", "txl_u_added_in_place"],
        "ex05": ["swin_column_major_tokens", "swin_height_multiplier", "swin_offsets_not_shifted", "swin_key_minus_query",
                 "swin_bias_heads_last", "swin_square_window_assumed"],
        "ex06": ["linear_factor_multiplied", "ntk_exponent_one", "ntk_exponent_half_d", "ntk_no_clamp",
                 "yarn_ramp_reversed", "yarn_floor_ceil_swapped", "yarn_not_truncated", "yarn_attention_missing",
                 "yarn_attention_ln", "llama3_factors_swapped", "llama3_frequency_not_wavelength",
                 "llama3_no_factor_checks"],
        "ex07": ["half_split_pairs_interleaved", "half_split_sin_sign", "half_split_theta_t_over_d",
                 "inverse_permutation", "permute_whole_weight", "permute_columns", "permute_in_place"],
        "ex08": ["packed_ids_not_reset", "packed_mask_plain_causal", "window_off_by_one", "sinks_counted_twice",
                 "sinks_dropped", "sinks_short_stream", "window_no_checks"],
    },
    CURRENT: {
        "ex01": ["settings_only_rope_parameters", "settings_inner_length_wins", "settings_not_copied",
                 "bands_frequency_not_wavelength", "bands_thresholds_inclusive", "bands_factors_swapped"],
        "ex02": ["longrope_switch_at_length", "longrope_multiply", "longrope_attention_from_seq_len",
                 "longrope_factor_log_not_sqrt", "longrope_no_factor_shape_check"],
        "ex03": ["lengths_prompt_decoded", "cache_rotated_for_the_final_length", "lengths_t_not_t_plus_1",
                 "stale_no_clamp", "cache_asks_per_token"],
        "ex04": ["partial_last_dimensions", "partial_head_frequencies", "proportional_rotary_frequencies",
                 "partial_pairs_across_head", "partial_rotated_part_only", "partial_no_even_check"],
        "ex05": ["scales_mu_not_squared", "scales_cos_sin_always_mu", "mscale_natural_for_small",
                 "scales_zero_counts_as_set", "scales_rotated_width"],
        "ex06": ["layer_types_shifted_by_one", "inv_freq_factor_on_every_layer", "inv_freq_times_factor",
                 "chunked_is_a_sliding_window", "chunked_counted_from_one", "chunked_not_causal", "nope_p_not_p_plus_1",
                 "nope_rounds", "nope_log_not_log1p", "nope_no_checks"],
        "ex07": ["mrope_text_resumes_at_token_count", "mrope_image_read_column_by_column",
                 "mrope_height_width_rows_swapped", "mrope_advance_by_max_h_w", "mrope_section_cuts_dimensions",
                 "mrope_pairs_cycle_through_rows", "mrope_frequencies_restart_per_section", "mrope_interleaved_pairs"],
        "ex08": ["swin_v2_divided_by_the_side", "swin_v2_no_factor_8", "swin_v2_no_division_by_log2_8",
                 "swin_v2_natural_log", "swin_v2_sign_dropped", "swin_v2_pretrained_window_ignored",
                 "swin_v2_nan_for_a_side_of_one", "swin_v2_last_axis_dw_dh", "swin_v2_no_sigmoid",
                 "swin_v2_sigmoid_without_16", "swin_v2_key_minus_query", "swin_v2_heads_last"],
        "ex09": ["tiled_no_rescale", "tiled_rescales_the_sum_only", "tiled_no_max_subtracted",
                 "tiled_nan_when_a_tile_hides_a_whole_row", "tiled_mask_adds_minus_1e9", "tiled_queries_from_position_0",
                 "tiled_no_sqrt_d", "tiled_bias_of_whole_rows", "tiled_bias_materialised_once"],
    },
}
#: Each assignment's authoring file and wrong answers.
SPECS = {ASSIGNMENT: ROOT / "authoring" / "exercises.md", ADVANCED: ROOT / "authoring" / "advanced.md",
         CURRENT: ROOT / "authoring" / "current.md"}
WRONG = {ASSIGNMENT: wrong_solutions.WRONG, ADVANCED: advanced_answers.WRONG, CURRENT: current_answers.WRONG}
#: The docs' table.
TABLE = ROOT / "docs" / "course" / "named-mistakes.md"


def the_text(assignment):
    """``{exercise: [named mistake, ...]}`` of `assignment`'s authoring file."""
    return named_mistakes(SPECS[assignment].read_text(encoding="utf-8"))


def cost(assignment, label):
    """``(function, points lost in its exercise, the function's points)`` of the wrong answer `label`: its exercise's
    test cells graded in this process through the real judge (its function's is ``{exercise}_{function}_test``).
    That it loses nothing in another exercise is test_answers_in_process's to prove, for every wrong answer."""
    exercise, functions = WRONG[assignment][label]
    [function] = functions
    notebook = make_submission(functions=functions, release_notebook=source_notebook(assignment))
    scores = scores_against_reference(notebook, graded=lambda grade_id: exercise_of(grade_id) == exercise)
    lost = round(sum(points - score for score, points in scores.values()), 2)
    return function, lost, scores[f"{exercise}_{function}_test"][1]


def shares(assignment):
    """``{label: the least share}`` of `assignment`'s named mistakes: each function's by how many it names."""
    function_of = {label: (exercise, *functions) for label, (exercise, functions) in WRONG[assignment].items()}
    labels = [label for labels in NAMED[assignment].values() for label in labels]
    named = collections.Counter(function_of[label] for label in labels)
    return {label: least_share(named[function_of[label]]) for label in labels}


def rows():
    """The table's rows (:func:`posenc_course.authoring.rubric.costs_table`), each named mistake measured."""
    measured = []
    for assignment, exercises in NAMED.items():
        text, share = the_text(assignment), shares(assignment)
        for exercise, labels in exercises.items():
            for mistake, label in zip(text[exercise], labels):
                function, lost, points = cost(assignment, label)
                measured.append((assignment, exercise, function, mistake, label, lost, points,
                                 share[label]))
    return measured


def page(measured):
    """The docs page of the named mistakes' costs, from `measured` rows."""
    return "\n".join([
        "---", "html_theme.sidebar_secondary.remove: true", "---", "",  # the tables take the page's width
        "# What a named mistake costs", "",
        "Each exercise ends its reading with the mistakes it warns about by name. Each one costs at least a share "
        f"of the points of the function it is made in (*At least*: {NAMED_MISTAKE_SHARE:.0%}, or an equal part "
        f"where the function names more than {round(1 / NAMED_MISTAKE_SHARE)}; the authoring guide says why), and "
        "only in its own exercise: `make test` grades "
        "each as a wrong answer and fails if it costs less. *Costs* is the points it loses in its exercise, and "
        "their share of the function's; it may pass 100% where the exercise's other functions call it. The "
        "tables are that measure, made by `make mistakes-table`; a test fails when they are stale.", "",
        costs_table(measured)])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else TABLE
    target.write_text(page(rows()), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
