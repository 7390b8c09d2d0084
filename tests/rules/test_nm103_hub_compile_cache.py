"""NM103: the Hub compile-cache context manager is unwrapped (with a todo) and its synchronisation removed."""

from tests.rules.case import findings, migrate, unchanged


def test_cache_context_unwrapped_and_sync_removed() -> None:
    result = migrate(
        """
        from optimum.neuron.cache import hub_neuronx_cache, synchronize_hub_cache

        with hub_neuronx_cache():
            model = load()
        synchronize_hub_cache(cache_repo_id="org/cache")
        """,
        "NM103",
    )
    assert "model = load()\n" in result.text
    assert "with " not in result.text
    assert "synchronize_hub_cache" not in result.text
    assert "from optimum" not in result.text
    assert findings(result, "NM103") == {(3, "todo"), (5, "fixed")}


def test_a_local_compile_cache_is_left_alone() -> None:
    unchanged(
        """
        import os

        os.environ["TORCH_NEURONX_NEFF_CACHE_DIR"] = "/var/cache/neff"
        """,
        "NM103",
    )
