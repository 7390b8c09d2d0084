"""Renderers for both tools. Reads plain records only: never imports torch, libcst or transformers."""
