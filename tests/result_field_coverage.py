"""Which test checks the value of each result field of every registered estimator and scorer.

``tests/test_result_fields.py`` walks every result model down to its leaves (nested models, list items) and
fails for a leaf listed nowhere here, for an entry naming a leaf that no longer exists, and for a named test that
does not exist or whose assertions do not name the leaf. Scorers are keyed ``scorer:<name>`` over their metrics
and ``coverage`` (no scorer declares a fixed set of breakdown keys).

COVERED was seeded by a search for test functions whose ``assert`` statements (or assertion calls: approx,
allclose, assert_*) name the leaf, in the test files that import the estimator's module or name it; entries
added later point at tests written to check that value against an independent figure.
ECHOES are leaves that repeat a params field (or a fixed label) without computation, with the reason.
PENDING are the leaves that still have no value test: the gap, listed so that it can only shrink.
"""

COVERED: dict[str, dict[str, tuple[str, ...]]] = {
    "axial_slr.pgd": {
        "abs_kappa": ("tests/service/test_axial_slr.py::test_saturated_erf_freezes_kappa_while_nu_learns",),
        "final_lambda": ("tests/service/test_axial_slr.py::test_schedule_floor_and_trajectory_bookkeeping",),
        "final_oracle_risk": ("tests/service/test_axial_slr.py::test_pgd_final_risks_are_those_of_the_final_state",),
        "final_risk": ("tests/service/test_axial_slr.py::test_pgd_final_risks_are_those_of_the_final_state",),
        "k": ("tests/service/test_axial_slr.py::test_schedule_floor_and_trajectory_bookkeeping",),
        "reconstructed": ("tests/service/test_axial_slr_fields.py::test_pgd_lists_the_trajectory_as_reconstructed",),
        "signed_nu": ("tests/service/test_axial_slr.py::test_saturated_erf_freezes_kappa_while_nu_learns",),
        "trajectory[].abs_kappa": (
            "tests/service/test_axial_slr.py::test_saturated_erf_freezes_kappa_while_nu_learns",
        ),
        "trajectory[].lam": ("tests/service/test_axial_slr.py::test_schedule_floor_and_trajectory_bookkeeping",),
        "trajectory[].manifold_distance": (
            "tests/service/test_axial_slr.py::test_saturated_erf_freezes_kappa_while_nu_learns",
        ),
        "trajectory[].oracle_risk": (
            "tests/service/test_axial_slr.py::test_erf_inner_tends_to_the_bayes_risk_and_simplifications_do_not",
        ),
        "trajectory[].rho": (
            "tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",
        ),
        "trajectory[].risk": (
            "tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",
        ),
        "trajectory[].signed_nu": (
            "tests/service/test_axial_slr.py::test_saturated_erf_freezes_kappa_while_nu_learns",
        ),
        "trajectory[].t": ("tests/service/test_axial_slr.py::test_schedule_floor_and_trajectory_bookkeeping",),
        "v": ("tests/service/test_axial_slr.py::test_validation_names_the_field",),
    },
    "axial_slr.risk": {
        "abs_kappa": ("tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",),
        "bayes_risk": ("tests/service/test_axial_slr.py::test_risk_plot_draws_the_variants",),
        "exact_oracle_risk_1d": (
            "tests/service/test_axial_slr.py::test_exact_one_dimensional_risk_matches_monte_carlo",
        ),
        "exact_risk_1d": ("tests/service/test_axial_slr.py::test_exact_one_dimensional_risk_matches_monte_carlo",),
        "excess_risk": ("tests/service/test_axial_slr.py::test_excess_risk_nu_and_the_standard_error_across_seeds",),
        "kappa": ("tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",),
        "manifold_distance": (
            "tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",
        ),
        "nu": ("tests/service/test_axial_slr.py::test_excess_risk_nu_and_the_standard_error_across_seeds",),
        "oracle_excess_risk": (
            "tests/service/test_axial_slr.py::test_erf_inner_tends_to_the_bayes_risk_and_simplifications_do_not",
        ),
        "oracle_risk": (
            "tests/service/test_axial_slr.py::test_erf_inner_tends_to_the_bayes_risk_and_simplifications_do_not",
        ),
        "oracle_risk_se": (
            "tests/service/test_axial_slr.py::test_erf_inner_tends_to_the_bayes_risk_and_simplifications_do_not",
        ),
        "reconstructed": (
            "tests/service/test_axial_slr_fields.py::test_risk_lists_the_bayes_risk_and_the_variants_as_reconstructed",
        ),
        "rho": ("tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",),
        "risk": ("tests/service/test_axial_slr.py::test_risk_plot_draws_the_variants",),
        "risk_se": ("tests/service/test_axial_slr.py::test_excess_risk_nu_and_the_standard_error_across_seeds",),
        "signed_nu": ("tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",),
        "variants[].predictor": ("tests/service/test_axial_slr.py::test_oracle_risk_table_within_sampling_error",),
        "variants[].risk": ("tests/service/test_axial_slr.py::test_risk_plot_draws_the_variants",),
        "variants[].se": ("tests/service/test_axial_slr.py::test_exact_one_dimensional_risk_matches_monte_carlo",),
        "warnings": ("tests/service/test_axial_slr.py::test_predictor_is_sign_symmetric_and_reports_alignment",),
    },
    "compression.batch_regret": {
        "form": ("tests/service/test_compression.py::test_batch_regret_gaussian_leverage_matches_integral",),
        "leverages": ("tests/service/test_compression.py::test_batch_regret_gaussian_leverage_matches_integral",),
        "mean_regret_nats": (
            "tests/service/test_compression.py::test_batch_regret_gaussian_leverage_matches_integral",
        ),
        "pnml_probs": ("tests/service/test_compression.py::test_batch_regret_multinomial_closed_form",),
        "reconstructed": ("tests/service/test_compression.py::test_batch_regret_gaussian_leverage_matches_integral",),
        "regret_nats": ("tests/service/test_compression.py::test_batch_regret_gaussian_leverage_matches_integral",),
    },
    "compression.codelength": {
        "codelength_bits": ("tests/service/test_compression.py::test_codelength_hand_values",),
        "codelength_nats": ("tests/service/test_compression.py::test_codelength_hand_values",),
        "ml_codelength_nats": (
            "tests/service/test_compression.py::test_codelength_reports_the_ml_codelength_and_alphabet_by_hand",
        ),
        "n": ("tests/service/test_compression.py::test_codelength_nml_cap_is_inclusive",),
        "num_symbols": (
            "tests/service/test_compression.py::test_codelength_reports_the_ml_codelength_and_alphabet_by_hand",
        ),
        "reconstructed": ("tests/service/test_compression.py::test_nml_large_n_spec_b3_item2",),
        "regret_vs_ml_nats": ("tests/service/test_compression.py::test_codelength_hand_values",),
    },
    "compression.double_descent": {
        "experiment": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "n": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "peak_ratio": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "peak_width": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "reconstructed": ("tests/service/test_compression.py::test_rf_decomposition_identity",),
        "rows[].approx_error": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].bayes_ce": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].bayes_fixed_ce": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].bayes_regret": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].mle_bayes_gap": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].mle_ce": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].pnml_ce": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].pnml_regret": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].width": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "rows[].width_over_n": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
    },
    "compression.nml_regret": {
        "asymptotic_nats": ("tests/service/test_compression.py::test_nml_large_n_spec_b3_item2",),
        "log_c_bits": ("tests/service/test_compression.py::test_nml_large_n_spec_b3_item2",),
        "log_c_nats": ("tests/service/test_compression.py::test_nml_large_n_spec_b3_item2",),
        "n": ("tests/service/test_compression.py::test_rf_widths_match_dense_reference",),
        "num_symbols": ("tests/api/test_client.py::test_client_round_trip",),
        "reconstructed": ("tests/service/test_compression.py::test_nml_large_n_spec_b3_item2",),
    },
    "fdslm.perception_vector": {
        "best_layer": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "d": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "layers[].auc": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "layers[].layer": (
            "tests/service/test_fdslm_fields.py::test_selected_layers_keep_their_request_order_and_their_own_vectors",
        ),
        "layers[].midpoint": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "layers[].norm": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "layers[].vector": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "n_generative": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "n_perceptive": ("tests/service/test_fdslm.py::test_perception_vector_recovers_the_planted_axis",),
        "reconstructed": (
            "tests/service/test_fdslm_fields.py::test_perception_vector_lists_the_layers_and_best_layer_as_reconstructed",
        ),
    },
    "fdslm.state_lag": {
        "censor_bound": ("tests/service/test_fdslm.py::test_censoring_when_the_transition_is_beyond_the_window",),
        "censored": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "censoring_rate": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "frac_perceptive": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "km_lags": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "km_median_frames": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "km_median_ms": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "km_survival": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "lag_frames": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "lag_ms": ("tests/service/test_fdslm.py::test_noise_free_lags_follow_the_strict_rule_and_the_steering_law",),
        "median_observed_frames": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "n_dialogues": (
            "tests/service/test_fdslm_fields.py::test_dialogue_count_and_the_steering_law_at_asymmetric_alphas",
        ),
        "predicted[].alpha": (
            "tests/service/test_fdslm_fields.py::test_dialogue_count_and_the_steering_law_at_asymmetric_alphas",
        ),
        "predicted[].censored": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "predicted[].crossing": (
            "tests/service/test_fdslm_fields.py::test_dialogue_count_and_the_steering_law_at_asymmetric_alphas",
        ),
        "predicted[].lag_frames": ("tests/service/test_fdslm.py::test_kaplan_meier_fixture_and_curve",),
        "reconstructed": ("tests/service/test_fdslm_fields.py::test_state_lag_lists_its_reconstructed_fields",),
    },
    "hyperconnections.token_dynamics": {
        "blocks[].det_im": (
            "tests/service/test_hyperconnections.py::test_static_crossing_at_minus_0_08_is_the_det_zero_root",
        ),
        "blocks[].det_re": (
            "tests/service/test_hyperconnections.py::test_hopf_crossing_at_s_zero_with_unit_frequency",
        ),
        "blocks[].mu_im": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "blocks[].mu_re": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "blocks[].multiplicity": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "blocks[].p": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "blocks[].trace_im": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "blocks[].trace_re": (
            "tests/service/test_hyperconnections.py::test_hopf_crossing_at_s_zero_with_unit_frequency",
        ),
        "critical_a_r": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "crossings[].omega": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "crossings[].param": (
            "tests/service/test_hyperconnections.py::test_hopf_crossing_at_s_zero_with_unit_frequency",
        ),
        "crossings[].type": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "crossings[].value": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "eigenvalues[].im": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "eigenvalues[].mu_im": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "eigenvalues[].mu_re": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "eigenvalues[].multiplicity": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "eigenvalues[].p": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "eigenvalues[].re": (
            "tests/service/test_hyperconnections_fields.py::test_eigenvalues_and_blocks_match_a_dense_jacobian",
        ),
        "fd_jacobian_residual": (
            "tests/service/test_hyperconnections.py::test_closed_form_spectrum_equals_finite_difference_spectrum",
        ),
        "fd_residual": (
            "tests/service/test_hyperconnections.py::test_closed_form_spectrum_equals_finite_difference_spectrum",
        ),
        "hyperbolic": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "linear_label": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "reconstructed": (
            "tests/service/test_hyperconnections_fields.py::test_every_field_resting_on_the_reconstructed_ode_is_listed",
        ),
        "simulation.final_norm": ("tests/service/test_hyperconnections.py::test_series_downsampled_and_plot_draws_it",),
        "simulation.frequency": ("tests/service/test_hyperconnections.py::test_two_stream_regimes",),
        "simulation.norm_series.norm": (
            "tests/service/test_hyperconnections.py::test_series_downsampled_and_plot_draws_it",
        ),
        "simulation.norm_series.t": (
            "tests/service/test_hyperconnections.py::test_series_downsampled_and_plot_draws_it",
        ),
        "simulation.regime": (
            "tests/service/test_hyperconnections.py::test_overflowing_run_is_a_divergence_with_a_finite_record",
        ),
        "simulation.t_end": (
            "tests/service/test_hyperconnections.py::test_overflowing_run_is_a_divergence_with_a_finite_record",
        ),
        "spectral_abscissa": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "sweep_curve[].spectral_abscissa": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
        "sweep_curve[].value": (
            "tests/service/test_hyperconnections.py::test_one_stream_thresholds_closed_form_and_continuation",
        ),
    },
    "layer_patching.plan": {
        "chain_costs.first_to_last": (
            "tests/service/test_layer_patching_fields.py::test_chain_costs_of_a_table_with_a_non_patchable_layer",
        ),
        "chain_costs.klpatch": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "chain_costs.last_to_first": (
            "tests/service/test_layer_patching.py::test_monotone_costs_last_to_first_is_optimal_with_equal_blocks",
        ),
        "chain_costs.lattice": (
            "tests/service/test_layer_patching.py::test_lattice_at_most_greedy_chain_random_and_equal_for_modular",
        ),
        "klpatch_order": (
            "tests/service/test_layer_patching.py::test_one_shot_differs_from_iterative_under_interaction",
        ),
        "lattice_chain_cost": (
            "tests/service/test_layer_patching.py::test_lattice_at_most_greedy_chain_random_and_equal_for_modular",
        ),
        "lattice_path": (
            "tests/service/test_layer_patching.py::test_table_mode_matches_unary_and_skips_non_patchable_layers",
        ),
        "max_added_depth": (
            "tests/service/test_layer_patching_fields.py::test_layer_count_and_maximum_added_depth_from_copied_teacher_layers",
        ),
        "non_patchable": (
            "tests/service/test_layer_patching.py::test_table_mode_matches_unary_and_skips_non_patchable_layers",
        ),
        "num_layers": (
            "tests/service/test_layer_patching_fields.py::test_layer_count_and_maximum_added_depth_from_copied_teacher_layers",
        ),
        "plans[].added_depth": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].dp.cost": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].dp.gap_to_dp": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].dp.patched": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].dp.reachable": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].first_to_last.cost": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].first_to_last.gap_to_dp": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].first_to_last.patched": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].first_to_last.reachable": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].greedy_is_optimal": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].klpatch.cost": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].klpatch.gap_to_dp": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].klpatch.patched": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].klpatch.reachable": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].last_to_first.cost": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].last_to_first.gap_to_dp": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].last_to_first.patched": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].last_to_first.reachable": ("tests/service/test_layer_patching.py::test_knapsack_counter_example",),
        "plans[].param_budget": (
            "tests/service/test_layer_patching.py::test_param_budgets_become_the_largest_reachable_depth",
        ),
        "plans[].params": (
            "tests/service/test_layer_patching.py::test_param_budgets_become_the_largest_reachable_depth",
        ),
        "reconstructed": (
            "tests/service/test_layer_patching_fields.py::test_reconstructed_lists_the_plans_and_in_table_mode_the_lattice",
        ),
        "teacher_layers": ("tests/service/test_layer_patching.py::test_copied_teacher_layers_equal_block_sizes",),
    },
    "minhash.jaccard": {
        "collisions": ("tests/service/test_minhash.py::test_jaccard_counts_agreeing_slots_that_are_not_empty",),
        "jaccard": ("tests/service/test_minhash.py::test_jaccard_counts_agreeing_slots_that_are_not_empty",),
        "num_perm": ("tests/service/test_minhash.py::test_jaccard_counts_agreeing_slots_that_are_not_empty",),
        "std_error": ("tests/service/test_minhash.py::test_jaccard_counts_agreeing_slots_that_are_not_empty",),
    },
    "minhash.minner": {
        "collisions": ("tests/service/test_minhash.py::test_sketches_of_different_versions_never_mix",),
        "intersection": ("tests/service/test_minhash.py::test_minner_counts_and_estimate_follow_their_definitions",),
        "jaccard": ("tests/service/test_minhash.py::test_minner_counts_and_estimate_follow_their_definitions",),
        "minner_count": ("tests/service/test_minhash.py::test_minner_counts_and_estimate_follow_their_definitions",),
        "query_size": ("tests/service/test_minhash.py::test_cost_functions_follow_their_formulas",),
        "stored_size": ("tests/service/test_minhash.py::test_cost_functions_follow_their_formulas",),
    },
    "minhash.simulate": {
        "estimators[].estimator": ("tests/service/test_minhash.py::test_simulate_reproducible_and_validated",),
        "estimators[].hashing": (
            "tests/service/test_minhash_fields.py::test_circulant_rows_are_exact_when_the_shifts_cover_the_universe",
        ),
        "estimators[].mean": ("tests/service/test_minhash.py::test_simulate_rows_truth_and_boundaries",),
        "estimators[].mse": ("tests/service/test_minhash.py::test_minner_approximation_matches_spec_and_monte_carlo",),
        "estimators[].target": ("tests/service/test_plots.py::test_minhash_simulate_plot_bars_are_the_variances",),
        "estimators[].true_value": (
            "tests/service/test_minhash_fields.py::test_true_values_are_the_targets_and_satisfy_the_mse_identity",
        ),
        "estimators[].variance": ("tests/service/test_plots.py::test_minhash_simulate_plot_bars_are_the_variances",),
        "jaccard": ("tests/service/test_minhash.py::test_simulate_rows_truth_and_boundaries",),
        "trials": ("tests/service/test_minhash.py::test_simulate_rows_truth_and_boundaries",),
        "var_classical": ("tests/service/test_minhash.py::test_simulate_rows_truth_and_boundaries",),
    },
    "minhash.sketch": {
        "hash_version": ("tests/service/test_minhash.py::test_hash_version_3_is_pinned_and_the_default",),
        "hashvalues": ("tests/service/test_minhash.py::test_hash_version_3_is_pinned_and_the_default",),
        "n_distinct": ("tests/service/test_minhash.py::test_sketch_order_independent_dedup_and_merge_equals_union",),
        "num_perm": ("tests/service/test_minhash.py::test_sketch_order_independent_dedup_and_merge_equals_union",),
        "universe": ("tests/service/test_minhash.py::test_cost_functions_follow_their_formulas",),
        "warning": (
            "tests/service/test_minhash.py::test_hasher_rejects_unknown_schemes_versions_and_repeating_shifts",
        ),
    },
    "minhash.variance": {
        "jaccard": ("tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",),
        "minner_mean_intersection_approx": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "minner_mse_approx": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "minner_mse_intersection_approx": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "ratio": ("tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",),
        "reconstructed": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "var_classical": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "var_cminhash_approx": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "var_cminhash_exact": (
            "tests/service/test_minhash.py::test_variance_minner_fields_are_the_delta_clark_approximation",
        ),
        "warning": ("tests/service/test_minhash.py::test_variance_matches_spec_table",),
    },
    "moead.omm_runtime": {
        "evals": (
            "tests/service/test_estimator_edges.py::test_moead_run_covering_the_front_exactly_at_max_evals_is_finished",
        ),
        "evals_over_n2": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "evals_over_n2_log_n": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "finished": (
            "tests/service/test_estimator_edges.py::test_moead_run_covering_the_front_exactly_at_max_evals_is_finished",
        ),
        "max_evals": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "mean": ("tests/service/test_moead.py::test_count_level_matches_bit_level",),
        "mean_generations": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "median": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "n": ("tests/service/test_moead.py::test_scaling_point_equals_runtime_call",),
        "num_subproblems": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "r": ("tests/service/test_moead.py::test_domain_errors",),
        "reconstructed": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "sd": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "se": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "simulated_evals": (
            "tests/service/test_moead_sim.py::test_simulated_evals_bound_the_replicates_own_evaluations",
        ),
        "unfinished": (
            "tests/service/test_estimator_edges.py::test_moead_run_covering_the_front_exactly_at_max_evals_is_finished",
        ),
        "warnings": ("tests/service/test_moead.py::test_unfinished_replicates_and_degenerate",),
    },
    "moead.omm_scaling": {
        "bootstrap": (
            "tests/service/test_moead_sim.py::test_log_adjusted_slope_and_its_ci_are_the_slope_shifted_by_the_log_log_slope",
        ),
        "ci_level": (
            "tests/service/test_moead_sim.py::test_log_adjusted_slope_and_its_ci_are_the_slope_shifted_by_the_log_log_slope",
        ),
        "points[].evals_over_n2": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].evals_over_n2_log_n": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].finished": (
            "tests/browser/test_page.py::test_params_form_runs_an_estimator_and_shows_result_and_plot",
        ),
        "points[].max_evals": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].mean": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].median": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].n": ("tests/browser/test_page.py::test_params_form_runs_an_estimator_and_shows_result_and_plot",),
        "points[].sd": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].se": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "points[].unfinished": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "reconstructed": ("tests/service/test_moead.py::test_summary_fields_consistent",),
        "slope": ("tests/service/test_plots.py::test_moead_scaling_plot_draws_means_and_the_ols_line",),
        "slope_ci_high": ("tests/service/test_moead.py::test_scaling_slopes_match_table",),
        "slope_ci_low": ("tests/service/test_moead.py::test_scaling_slopes_match_table",),
        "slope_log_adjusted": ("tests/service/test_moead.py::test_scaling_slopes_match_table",),
        "slope_log_adjusted_ci_high": (
            "tests/service/test_moead_sim.py::test_log_adjusted_slope_and_its_ci_are_the_slope_shifted_by_the_log_log_slope",
        ),
        "slope_log_adjusted_ci_low": (
            "tests/service/test_moead_sim.py::test_log_adjusted_slope_and_its_ci_are_the_slope_shifted_by_the_log_log_slope",
        ),
        "warnings": ("tests/service/test_moead.py::test_unfinished_replicates_and_degenerate",),
    },
    "predictive_coding.target_alignment": {
        "equilibrium_residual": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "loss_after_bp": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "loss_after_pc": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "loss_before": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "lr_rule": ("tests/service/test_predictive_coding.py::test_optimal_rate_rule_gives_first_order_alignment_one",),
        "n_draws": ("tests/service/test_predictive_coding.py::test_cost_scales_with_draws_and_inference_steps",),
        "n_excluded": (
            "tests/service/test_predictive_coding.py::test_optimal_rate_rule_gives_first_order_alignment_one",
        ),
        "pc_minus_bp": (
            "tests/service/test_predictive_coding.py::test_one_layer_pc_equals_bp_and_aligns_perfectly_to_first_order",
        ),
        "pc_minus_bp_se": (
            "tests/service/test_predictive_coding.py::test_pc_beats_bp_on_average_for_single_samples_more_so_when_narrow",
        ),
        "per_draw[].ta_bp": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "per_draw[].ta_bp_first_order": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "per_draw[].ta_pc": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "per_draw[].ta_pc_first_order": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "reconstructed": (
            "tests/service/test_predictive_coding_fields.py::test_everything_resting_on_the_pc_equilibrium_is_listed_as_reconstructed",
        ),
        "ta_bp": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "ta_bp_first_order": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "ta_pc": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
        "ta_pc_first_order": ("tests/service/test_predictive_coding.py::test_two_layer_network_by_hand",),
    },
    "sae.hierarchical_recovery": {
        "dead_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "dead_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "loss_curve[].l1": ("tests/service/test_sae.py::test_warmup_and_clip_change_the_run_and_stay_finite",),
        "loss_curve[].loss": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "loss_curve[].mse": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "loss_curve[].mse_top": (
            "tests/service/test_sae_fields.py::test_recovery_parent_min_cos_and_step_zero_top_term_by_hand",
        ),
        "loss_curve[].step": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "loss_curve[].xortho": ("tests/service/test_sae.py::test_xortho_by_hand",),
        "random_init.child_mean_cos": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "random_init.hierarchy_consistency": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "random_init.n_true_children": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "random_init.parent_mean_cos": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "random_init.parent_min_cos": (
            "tests/service/test_sae_fields.py::test_recovery_parent_min_cos_and_step_zero_top_term_by_hand",
        ),
        "random_init.unique_parent_matches": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "reconstructed": ("tests/service/test_sae_fields.py::test_recovery_l0_total_adds_parents_and_children",),
        "test.cos": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "test.explained_variance": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "test.fvu": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "test.l0_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "test.l0_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "test.l0_total": ("tests/service/test_sae_fields.py::test_recovery_l0_total_adds_parents_and_children",),
        "test.mse": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "test.n": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "train.cos": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "train.explained_variance": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.fvu": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "train.l0_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.l0_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.l0_total": ("tests/service/test_sae_fields.py::test_recovery_l0_total_adds_parents_and_children",),
        "train.mse": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "train.n": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "trained.child_mean_cos": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "trained.hierarchy_consistency": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "trained.n_true_children": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "trained.parent_mean_cos": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
        "trained.parent_min_cos": (
            "tests/service/test_sae_fields.py::test_recovery_parent_min_cos_and_step_zero_top_term_by_hand",
        ),
        "trained.unique_parent_matches": ("tests/service/test_sae.py::test_recovery_of_the_planted_hierarchy",),
    },
    "sae.hierarchical_train": {
        "artifacts[].arrays": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "artifacts[].dtype": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "artifacts[].media_type": (
            "tests/service/test_sae.py::test_train_result_reports_its_flops_dimension_and_l0_totals",
        ),
        "artifacts[].name": (
            "tests/service/test_sae_fields.py::test_the_weights_artifact_is_named_as_its_blob_and_the_flops_are_reconstructed",
        ),
        "child_usage": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "d": ("tests/service/test_sae.py::test_train_result_reports_its_flops_dimension_and_l0_totals",),
        "dead_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "dead_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "flops.decoder_macs": ("tests/service/test_sae.py::test_flop_counts_of_the_released_configuration",),
        "flops.encoder_macs": (
            "tests/service/test_sae.py::test_train_result_reports_its_flops_dimension_and_l0_totals",
        ),
        "flops.encoder_saving": (
            "tests/service/test_sae.py::test_train_result_reports_its_flops_dimension_and_l0_totals",
        ),
        "flops.flat_encoder_macs": (
            "tests/service/test_sae.py::test_train_result_reports_its_flops_dimension_and_l0_totals",
        ),
        "held_out.cos": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "held_out.explained_variance": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "held_out.fvu": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "held_out.l0_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "held_out.l0_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "held_out.l0_total": ("tests/service/test_sae.py::test_l0_total_adds_parents_and_children_when_they_differ",),
        "held_out.mse": ("tests/service/test_sae.py::test_warmup_and_clip_change_the_run_and_stay_finite",),
        "held_out.n": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "loss_curve[].l1": ("tests/service/test_sae.py::test_warmup_and_clip_change_the_run_and_stay_finite",),
        "loss_curve[].loss": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "loss_curve[].mse": ("tests/service/test_sae.py::test_warmup_and_clip_change_the_run_and_stay_finite",),
        "loss_curve[].mse_top": (
            "tests/service/test_sae_fields.py::test_train_step_zero_top_term_and_weighted_loss_by_hand",
        ),
        "loss_curve[].step": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "loss_curve[].xortho": ("tests/service/test_sae.py::test_xortho_by_hand",),
        "n_train": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "parent_usage": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "reconstructed": (
            "tests/service/test_sae_fields.py::test_the_weights_artifact_is_named_as_its_blob_and_the_flops_are_reconstructed",
        ),
        "theta": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "train.cos": ("tests/service/test_sae.py::test_evaluation_metrics_by_hand",),
        "train.explained_variance": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.fvu": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
        "train.l0_children": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.l0_parents": (
            "tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",
        ),
        "train.l0_total": ("tests/service/test_sae.py::test_l0_total_adds_parents_and_children_when_they_differ",),
        "train.mse": ("tests/service/test_sae.py::test_warmup_and_clip_change_the_run_and_stay_finite",),
        "train.n": ("tests/service/test_sae.py::test_training_reduces_the_loss_reproducibly_and_ships_the_weights",),
    },
    "scorer:film_mcq": {
        "accuracy": ("tests/service/test_scoring_film_mcq.py::test_spec_synthetic_example",),
        "chance": ("tests/service/test_scoring_film_mcq.py::test_spec_synthetic_example",),
        "clustered_se": ("tests/service/test_scoring_film_mcq.py::test_spec_synthetic_example",),
        "coverage": ("tests/service/test_scoring_film_mcq.py::test_spec_synthetic_example",),
        "p_value_vs_chance": ("tests/service/test_scoring_film_mcq.py::test_spec_synthetic_example",),
    },
    "scorer:raven": {
        "coverage": ("tests/service/test_scoring_raven.py::test_parse_failures_and_missing_answers_count_wrong",),
        "group_composite": ("tests/service/test_scoring_raven.py::test_two_video_scores_and_their_sizes",),
        "overall_acc": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "parse_failure_rate": (
            "tests/service/test_scoring_raven.py::test_parse_failures_and_missing_answers_count_wrong",
        ),
        "s_coh": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "s_cons": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "s_l1": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "s_l2": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "s_l3": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "s_main": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
        "strict_pass": ("tests/service/test_scoring_raven.py::test_synthetic_table_and_cross_modal_gain",),
    },
    "scorer:scene3d_densecap": {
        "bleu_4_at_0_25": ("tests/service/test_scoring_scene3d.py::test_densecap_missed_object_gets_sos_eos",),
        "bleu_4_at_0_5": ("tests/service/test_scoring_scene3d.py::test_graded_metric_intervals_are_seeded_bootstraps",),
        "cider_at_0_25": ("tests/service/test_scoring_scene3d.py::test_densecap_missed_object_gets_sos_eos",),
        "cider_at_0_5": ("tests/service/test_scoring_scene3d.py::test_densecap_missed_object_gets_sos_eos",),
        "coverage": ("tests/service/test_scoring_scene3d.py::test_grounding_subsets_and_missing_predictions",),
        "meteor_at_0_25": (
            "tests/service/test_scene3d_fields.py::test_densecap_meteor_at_0_25_scores_the_candidates_of_that_threshold",
            "tests/service/test_scene3d_fields.py::test_densecap_meteor_at_0_25_equals_pycocoevalcaps_meteor",
        ),
        "meteor_at_0_5": (
            "tests/service/test_scene3d_fields.py::test_densecap_meteor_at_0_25_scores_the_candidates_of_that_threshold",
        ),
        "rouge_l_at_0_25": (
            "tests/service/test_scene3d_fields.py::test_densecap_rouge_l_at_0_25_equals_pycocoevalcap",
        ),
        "rouge_l_at_0_5": ("tests/service/test_scoring_scene3d.py::test_densecap_without_wrapping",),
    },
    "scorer:scene3d_grounding": {
        "acc_at_0_25": ("tests/service/test_scoring_scene3d.py::test_scanrefer_accuracy_fixture",),
        "acc_at_0_5": ("tests/service/test_scoring_scene3d.py::test_scanrefer_accuracy_fixture",),
        "acc_at_0_75": ("tests/service/test_scoring_scene3d.py::test_op_and_the_iou_eps_at_the_boundary",),
        "coverage": ("tests/service/test_scoring_scene3d.py::test_grounding_subsets_and_missing_predictions",),
        "f1_at_0_25": ("tests/service/test_scoring_scene3d.py::test_multi3drefer_fixture_and_zero_target",),
        "f1_at_0_5": ("tests/service/test_scoring_scene3d.py::test_scanrefer_accuracy_fixture",),
        "f1_at_0_75": (
            "tests/service/test_scoring_scene3d.py::test_multi3drefer_single_box_queries_take_the_best_pair",
        ),
    },
    "scorer:scene3d_qa": {
        "bleu_1": (
            "tests/service/test_caption_metrics.py::test_bleu_closest_reference_length_prefers_the_shorter_on_ties",
        ),
        "bleu_2": ("tests/service/test_caption_metrics.py::test_tokenizers",),
        "bleu_3": ("tests/service/test_scene3d_fields.py::test_qa_bleu_3_equals_pycocoevalcap",),
        "bleu_4": ("tests/service/test_caption_metrics.py::test_scan2cap_placeholder_cider_is_zero",),
        "cider": ("tests/service/test_caption_metrics.py::test_pycocoevalcap_measured_figures",),
        "coverage": ("tests/service/test_scoring_scene3d.py::test_grounding_subsets_and_missing_predictions",),
        "em_at_1": ("tests/service/test_scoring_scene3d.py::test_qa_text_metrics_reproduce_pycocoevalcap_figures",),
        "em_at_10": ("tests/service/test_scoring_scene3d.py::test_qa_em_at_10_and_missing_answer",),
        "em_refined": ("tests/service/test_scoring_scene3d.py::test_scanqa_normalisation_and_matching",),
        "meteor": ("tests/service/test_scoring_scene3d.py::test_qa_text_metrics_reproduce_pycocoevalcap_figures",),
        "rouge_l": ("tests/service/test_caption_metrics.py::test_pycocoevalcap_measured_figures",),
    },
    "scorer:stakebench": {
        "action_accuracy": ("tests/service/test_scoring_stakebench.py::test_t3_action_metrics_and_collapse_v10",),
        "action_balanced_accuracy": (
            "tests/service/test_scoring_stakebench.py::test_t3_action_metrics_and_collapse_v10",
        ),
        "action_effective_labels": (
            "tests/service/test_stakebench_fields.py::test_action_effective_labels_over_the_answered_items",
        ),
        "action_macro_f1": ("tests/service/test_scoring_stakebench.py::test_t3_action_metrics_and_collapse_v10",),
        "commitment_accuracy": ("tests/service/test_scoring_stakebench.py::test_t1_commitment_hand_computation",),
        "commitment_macro_f1": ("tests/service/test_scoring_stakebench.py::test_t1_commitment_hand_computation",),
        "commitment_mcc": ("tests/service/test_scoring_stakebench.py::test_t1_commitment_hand_computation",),
        "coverage": ("tests/service/test_scoring_stakebench.py::test_missing_side_answers_count_as_abstentions",),
        "directed_accuracy": ("tests/service/test_scoring_stakebench.py::test_registered_spec",),
        "odds_accuracy": (
            "tests/service/test_stakebench_fields.py::test_odds_accuracy_excludes_flat_truths_and_counts_band_forecasts_as_flat",
        ),
        "odds_settings_positive": ("tests/service/test_scoring_stakebench.py::test_t4_baselines_and_skill_v10",),
        "odds_sign_test_p": ("tests/service/test_scoring_stakebench.py::test_t4_baselines_and_skill_v10",),
        "odds_skill": ("tests/service/test_scoring_stakebench.py::test_t4_baselines_and_skill_v10",),
        "side_coverage": ("tests/service/test_scoring_stakebench.py::test_t2_directed_accuracy_v10",),
        "side_strict_accuracy": ("tests/service/test_scoring_stakebench.py::test_t2_directed_accuracy_v10",),
        "stake_weighted_da": ("tests/service/test_scoring_stakebench.py::test_t2_directed_accuracy_v10",),
    },
    "scorer:televal": {
        "acoustic_robustness": (
            "tests/service/test_scoring_televal.py::test_acoustic_robustness_v5_pure_and_from_items",
        ),
        "basic_match": ("tests/service/test_scoring_televal.py::test_exist_match_alternatives_any_of_and_all_of",),
        "caption_trap_rate": (
            "tests/service/test_scoring_televal.py::test_caption_trap_counts_flags_proxy_and_appropriate_replies_by_cue",
        ),
        "choice_accuracy": ("tests/service/test_scoring_televal.py::test_choice_dataset",),
        "choice_cover": ("tests/service/test_scoring_televal.py::test_choice_items_lower_case_ref_query_and_cushion",),
        "coverage": ("tests/service/test_scoring_televal.py::test_missing_predictions",),
        "ia": (
            "tests/service/test_scoring_televal.py::test_external_scores_are_averaged_as_given_and_kept_out_of_aggregates",
        ),
        "judge_above60": (
            "tests/service/test_televal_fields.py::test_judge_above_threshold_share_over_every_judge_item",
        ),
        "judge_avg": (
            "tests/service/test_scoring_televal.py::test_judge_items_rescaled_per_task_with_floor_and_threshold",
        ),
        "modal_consistency": ("tests/service/test_scoring_televal.py::test_fixture_acoustic_and_modal",),
        "overall": ("tests/service/test_scoring_televal.py::test_groups_and_overall_formulas",),
        "rcf": (
            "tests/service/test_scoring_televal.py::test_external_scores_are_averaged_as_given_and_kept_out_of_aggregates",
        ),
    },
    "scorer:ubench": {
        "acc": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "assd": ("tests/service/test_scoring_ubench.py::test_breakdown_states_its_conventions",),
        "coverage": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "dice": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "f1": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "hd95": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "iou": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "nsd": ("tests/service/test_scoring_ubench.py::test_breakdown_states_its_conventions",),
        "pc": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "se": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
        "sp": ("tests/service/test_scoring_ubench.py::test_fixture_means_and_item_values",),
    },
    "scorer:vimu": {
        "all_avg": ("tests/service/test_scoring_vimu.py::test_registered_spec",),
        "coverage": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
        "eg": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
        "oe": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
        "rm": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
        "ssu_avg": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
        "sv": ("tests/service/test_scoring_vimu.py::test_v2_synthetic_example",),
    },
    "scorer:zbb": {
        "correctness": ("tests/service/test_scoring_zbb.py::test_registered_spec_and_paired_tests",),
        "coverage": ("tests/service/test_scoring_zbb.py::test_fixture_table",),
        "iwor": ("tests/service/test_scoring_zbb.py::test_registered_spec_and_paired_tests",),
    },
    "snn.gradient_mismatch": {
        "cosine": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "fd.max_abs": ("tests/service/test_snn.py::test_adjoint_is_the_exact_gradient_of_the_smoothed_objective",),
        "fd.n_coords": ("tests/service/test_snn.py::test_adjoint_is_the_exact_gradient_of_the_smoothed_objective",),
        "fd.rel_err": ("tests/service/test_snn.py::test_adjoint_is_the_exact_gradient_of_the_smoothed_objective",),
        "gap": ("tests/service/test_snn.py::test_reference_instance_values",),
        "localzo.cosine": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "localzo.delta": ("tests/service/test_snn_fields.py::test_localzo_settings_and_monte_carlo_error_by_hand",),
        "localzo.draws": ("tests/service/test_snn_fields.py::test_localzo_settings_and_monte_carlo_error_by_hand",),
        "localzo.mc_rel_err": (
            "tests/service/test_snn_fields.py::test_localzo_settings_and_monte_carlo_error_by_hand",
        ),
        "localzo.mismatch_abs": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "localzo.mismatch_rel": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "localzo.samples": ("tests/service/test_snn_fields.py::test_localzo_settings_and_monte_carlo_error_by_hand",),
        "localzo.spread": ("tests/service/test_snn.py::test_localzo_is_reproducible_and_reports_the_spread",),
        "loss": ("tests/service/test_snn.py::test_reference_instance_values",),
        "loss_smoothed": ("tests/service/test_snn.py::test_reference_instance_values",),
        "mismatch_abs": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "mismatch_rel": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "n_params": ("tests/service/test_snn.py::test_reference_instance_values",),
        "norm_g_f": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "norm_grad_lf": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "p": ("tests/service/test_snn.py::test_reference_instance_values",),
        "per_layer[].cosine": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "per_layer[].layer": (
            "tests/service/test_snn_fields.py::test_layer_labels_and_unit_counts_weight_the_layer_means",
        ),
        "per_layer[].mismatch_abs": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "per_layer[].mismatch_rel": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "per_layer[].n_units": (
            "tests/service/test_snn_fields.py::test_layer_labels_and_unit_counts_weight_the_layer_means",
        ),
        "per_layer[].norm_g_f": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "per_layer[].norm_grad_lf": ("tests/service/test_snn.py::test_rect_with_a_tiny_width_has_no_gradient",),
        "per_layer[].rate_gap": ("tests/service/test_snn.py::test_per_layer_blocks_add_up",),
        "per_layer[].spike_gap": ("tests/service/test_snn.py::test_per_layer_blocks_add_up",),
        "rate_gap": ("tests/service/test_snn.py::test_per_layer_blocks_add_up",),
        "reconstructed": ("tests/service/test_snn_fields.py::test_gradient_mismatch_lists_its_reconstructed_fields",),
        "spike_gap": ("tests/service/test_snn.py::test_per_layer_blocks_add_up",),
        "tail.band_density": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "tail.band_frac": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.kernel_tail": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.n_u": ("tests/service/test_snn.py::test_reference_instance_values",),
        "tail.per_layer[].band_density": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "tail.per_layer[].band_frac": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.per_layer[].kernel_tail": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.per_layer[].layer": (
            "tests/service/test_snn_fields.py::test_layer_labels_and_unit_counts_weight_the_layer_means",
        ),
        "tail.per_layer[].n_units": (
            "tests/service/test_snn_fields.py::test_layer_labels_and_unit_counts_weight_the_layer_means",
        ),
        "tail.per_time.band_frac": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.per_time.kernel_tail": ("tests/service/test_snn.py::test_plots_draw_the_result",),
        "tail.per_time.t": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "w_scale": ("tests/service/test_snn.py::test_reference_instance_values",),
    },
    "snn.threshold_tail": {
        "band_density": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "band_frac": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "kernel_tail": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "n_u": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_layer[].band_density": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_layer[].band_frac": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_layer[].kernel_tail": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_layer[].layer": (
            "tests/service/test_snn_fields.py::test_threshold_tail_layers_with_their_own_thresholds",
        ),
        "per_layer[].n_units": (
            "tests/service/test_snn_fields.py::test_threshold_tail_layers_with_their_own_thresholds",
        ),
        "per_time.band_frac": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_time.kernel_tail": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "per_time.t": ("tests/service/test_snn.py::test_threshold_tail_hand_computed",),
        "reconstructed": ("tests/service/test_snn_fields.py::test_threshold_tail_layers_with_their_own_thresholds",),
    },
    "steering.gradient_signature": {
        "cosines[].layer": (
            "tests/service/test_steering_fields.py::test_shape_counts_and_layer_labels_from_unequal_methods",
            "tests/service/test_steering_fields.py::test_each_layer_label_carries_that_layers_pressure_and_cosines",
        ),
        "cosines[].mean_gradient": ("tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",),
        "cosines[].per_example": ("tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",),
        "dim": ("tests/service/test_steering_fields.py::test_shape_counts_and_layer_labels_from_unequal_methods",),
        "num_layers": (
            "tests/service/test_steering_fields.py::test_shape_counts_and_layer_labels_from_unequal_methods",
        ),
        "reconstructed": ("tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",),
        "signatures[].delta_ce": ("tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",),
        "signatures[].layer_energy_pr": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].coordinate_entropy_rank": (
            "tests/service/test_steering.py::test_coordinate_measures_of_an_iid_gaussian_and_a_one_hot_gradient",
        ),
        "signatures[].layers[].coordinate_pr": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].cos_change_axis": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].effective_rank": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].frac_attenuating": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].layer": (
            "tests/service/test_steering_fields.py::test_shape_counts_and_layer_labels_from_unequal_methods",
            "tests/service/test_steering_fields.py::test_each_layer_label_carries_that_layers_pressure_and_cosines",
        ),
        "signatures[].layers[].mean_gradient_norm": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].pressure": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].rho": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].rho_mean_gradient": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].spectral_pr": (
            "tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",
        ),
        "signatures[].layers[].spectral_pr_normalized": (
            "tests/service/test_steering.py::test_spectral_pr_marchenko_pastur",
        ),
        "signatures[].mean_ce": ("tests/service/test_steering.py::test_pressure_fractions_cosines_and_ce_by_hand",),
        "signatures[].n": (
            "tests/service/test_steering_fields.py::test_shape_counts_and_layer_labels_from_unequal_methods",
        ),
    },
    "steering.persona_vector": {
        "best_layer": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "dim": ("tests/service/test_steering.py::test_persona_vector_reports_its_shape_from_unequal_groups",),
        "layers[].auc": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "layers[].layer": (
            "tests/service/test_steering.py::test_persona_vector_reports_its_shape_from_unequal_groups",
        ),
        "layers[].neg_mean_projection": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "layers[].norm": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "layers[].pos_mean_projection": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "layers[].separation": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "n_neg": ("tests/service/test_steering.py::test_persona_vector_reports_its_shape_from_unequal_groups",),
        "n_pos": ("tests/service/test_steering.py::test_persona_vector_reports_its_shape_from_unequal_groups",),
        "num_layers": ("tests/service/test_steering.py::test_persona_vector_reports_its_shape_from_unequal_groups",),
        "query_projections": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "reconstructed": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "unit_vectors": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
        "vectors": ("tests/service/test_steering.py::test_persona_vector_hand_computation",),
    },
    "ubench.friedman_nemenyi": {
        "avg_ranks": ("tests/service/test_ubench.py::test_friedman_nemenyi_spec_figures",),
        "cd": ("tests/service/test_ubench.py::test_friedman_nemenyi_spec_figures",),
        "chi2": ("tests/service/test_ubench.py::test_friedman_nemenyi_spec_figures",),
        "models": ("tests/service/test_ubench.py::test_friedman_errors",),
        "n_datasets": (
            "tests/service/test_ubench_stats.py::test_friedman_sizes_ranks_and_chi2_on_a_non_square_matrix",
        ),
        "n_models": ("tests/service/test_ubench_stats.py::test_friedman_sizes_ranks_and_chi2_on_a_non_square_matrix",),
        "p": ("tests/service/test_ubench.py::test_friedman_nemenyi_spec_figures",),
        "q_alpha": ("tests/service/test_ubench.py::test_friedman_nemenyi_spec_figures",),
    },
    "ubench.paired_significance": {
        "bin": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
        "mean_diff": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
        "n": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
        "n_nonzero": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
        "p": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
        "reconstructed": (
            "tests/service/test_ubench_fields.py::test_the_p_value_and_its_bin_are_listed_as_reconstructed",
        ),
        "statistic": ("tests/service/test_ubench.py::test_wilcoxon_exact_and_approx",),
    },
    "ubench.seg_metrics": {
        "cases[].acc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].assd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "cases[].assd_reason": ("tests/service/test_ubench_surface.py::test_empty_masks_follow_monai_for_nsd",),
        "cases[].dice": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "cases[].f1": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].fn": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].fp": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].hd95": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "cases[].hd95_reason": (
            "tests/service/test_ubench_surface.py::test_synapse_without_surface_metrics_keeps_them_null",
        ),
        "cases[].iou": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "cases[].nsd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "cases[].nsd_reason": ("tests/service/test_ubench_surface.py::test_empty_masks_follow_monai_for_nsd",),
        "cases[].pc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].se": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].sp": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].tn": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "cases[].tp": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "mean.acc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "mean.assd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "mean.dice": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "mean.f1": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "mean.hd95": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "mean.iou": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "mean.nsd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "mean.pc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "mean.se": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "mean.sp": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "n_cases": ("tests/service/test_ubench.py::test_mean_and_sd_over_cases",),
        "n_hd95": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.acc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "sd.assd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.dice": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.f1": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "sd.hd95": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.iou": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.nsd": ("tests/service/test_ubench_surface.py::test_synapse_empty_cases_in_the_estimator",),
        "sd.pc": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "sd.se": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "sd.sp": ("tests/service/test_ubench.py::test_square_fixture_counts_and_metrics",),
        "spacing": ("tests/service/test_ubench.py::test_square_fixture_with_spacing",),
        "surface_convention": ("tests/service/test_ubench_surface.py::test_scorer_means_follow_the_conventions",),
    },
    "ubench.uscore": {
        "a": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "constants_used": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "eff": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "g": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "p": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "s": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
        "uscore_100": ("tests/service/test_ubench.py::test_uscore_unet_on_busi",),
    },
    "unrolling.jacobian_error": {
        "L": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "curse_expected": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "curves[].abs_error": (
            "tests/service/test_unrolling_fields.py::test_rho_abs_errors_peaks_and_predicted_peak_by_hand",
        ),
        "curves[].bound": ("tests/service/test_unrolling.py::test_spec_table_poor_start",),
        "curves[].k0": ("tests/service/test_unrolling.py::test_spec_table_poor_start",),
        "curves[].peak_abs_error": (
            "tests/service/test_unrolling_fields.py::test_rho_abs_errors_peaks_and_predicted_peak_by_hand",
        ),
        "curves[].peak_rel_error": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "curves[].predicted_peak": (
            "tests/service/test_unrolling_fields.py::test_rho_abs_errors_peaks_and_predicted_peak_by_hand",
        ),
        "curves[].predicted_t_peak": ("tests/service/test_unrolling.py::test_spec_table_poor_start",),
        "curves[].rel_error": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "curves[].rel_error_at_K": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "curves[].stored_bytes": ("tests/service/test_unrolling.py::test_spec_table_poor_start",),
        "curves[].stored_iterates": ("tests/service/test_unrolling.py::test_spec_table_poor_start",),
        "curves[].t": ("tests/service/test_unrolling.py::test_samples_and_plot",),
        "curves[].t_peak": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "implicit_error": ("tests/service/test_unrolling.py::test_implicit_baseline",),
        "j_star_norm": ("tests/service/test_unrolling.py::test_ridge_kind_equals_the_quadratic_it_defines",),
        "kappa": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "method": (
            "tests/service/test_unrolling.py::test_non_commuting_dh_takes_the_recursion_and_matches_a_dense_unroll",
        ),
        "mu": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
        "reconstructed": (
            "tests/service/test_unrolling_fields.py::test_the_bound_its_peak_and_the_curse_criterion_are_listed_as_reconstructed",
        ),
        "rho": ("tests/service/test_unrolling_fields.py::test_rho_abs_errors_peaks_and_predicted_peak_by_hand",),
        "step": ("tests/service/test_unrolling.py::test_spec_table_zero_start",),
    },
}

ECHOES: dict[str, dict[str, str]] = {
    "compression.batch_regret": {"model": "echo of params.model"},
    "compression.codelength": {"method": "echo of params.method"},
    "fdslm.state_lag": {"rule": "echo of params.k / params.window as the rule's name"},
    "layer_patching.plan": {
        "cost_model": "echo of params.cost_model",
        "greedy_variant": "echo of params.greedy_variant",
    },
    "minhash.sketch": {"scheme": "echo of params.scheme", "seed": "echo of params.seed"},
    "snn.gradient_mismatch": {
        "tail.eps": "echo of params.eps",
        "tail.surrogate": "echo of params.surrogate",
        "tail.width": "echo of params.width",
    },
    "snn.threshold_tail": {
        "eps": "echo of params.eps",
        "surrogate": "echo of params.surrogate",
        "width": "echo of params.width",
    },
    "steering.gradient_signature": {
        "baseline": "echo of params.baseline",
        "methods": "the keys of params.grads, in their order",
        "pressure_convention": "a fixed sentence naming how the sign of pressure reads",
        "signatures[].method": "the keys of params.grads",
    },
    "ubench.paired_significance": {"test": "echo of params.test"},
    "ubench.seg_metrics": {
        "empty_cases": "echo of params.empty_cases",
        "nsd_tolerance": "echo of params.nsd_tolerance",
        "threshold": "echo of params.threshold",
    },
}

PENDING: dict[str, tuple[str, ...]] = {}
