"""NM605: use_flash_attention_2= -> attn_implementation=, use_auth_token= -> token= in transformers loading calls."""

from tests.rules.case import findings, migrate, unchanged


def test_removed_loading_kwargs_are_renamed() -> None:
    result = migrate(
        """
        import transformers

        tok = transformers.AutoTokenizer.from_pretrained(
            "meta-llama/Llama-3.2-1B",
            use_auth_token=HF_TOKEN,
        )
        """,
        "NM605",
    )
    assert "    token=HF_TOKEN,\n" in result.text
    assert "use_auth_token" not in result.text
    assert findings(result, "NM605") == {(5, "fixed")}


def test_a_project_function_keyword_is_left_alone() -> None:
    unchanged(
        """
        from transformers import AutoModel

        def download(name, use_auth_token=None):
            return fetch(name, use_auth_token=use_auth_token)
        """,
        "NM605",
    )
