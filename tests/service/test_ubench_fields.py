"""ubench.paired_significance: the fields listed as RECONSTRUCTED (docs/ubench.md)."""

from service.estimators.ubench import PairedParams, PairedResult, paired_fn
from service.registry import no_progress
from tests.service.field_paths import names_a_field


def test_the_p_value_and_its_bin_are_listed_as_reconstructed() -> None:
    """docs/ubench.md: which paired test U-Bench used could not be confirmed, so p and its bin are RECONSTRUCTED
    (for either test); the mean difference and the counts are not."""
    for test in ("wilcoxon", "ttest_rel"):
        res = paired_fn(
            PairedParams(model=[0.9, 0.8, 0.7, 0.75], baseline=[0.6, 0.7, 0.65, 0.7], test=test), no_progress
        )
        assert res.reconstructed == ["p", "bin"]
        assert all(names_a_field(PairedResult, name) for name in res.reconstructed)
