"""Shell mechanics shared by the rules that edit shell code: the lexer (``lexer``) and the command-line model
(``commands``). Rule bodies live in their rule modules (``codemods/launch/``, ``codemods/deps/``)."""

from codemods._lib.shell.commands import (
                                          COMMAND_WORDS,
                                          NEURON_CACHE,
                                          OPTIMUM_CLI,
                                          CommandLine,
                                          EmbeddedCommand,
                                          EnvSite,
                                          Report,
                                          Resolve,
                                          code_targets,
                                          command_lines,
                                          command_statements,
                                          cut,
                                          drop_line,
                                          env_sites,
                                          fill_empty_blocks,
                                          keep_script,
                                          launched_scripts,
                                          looks_like_command,
                                          next_code,
                                          remove_command,
                                          remove_env_site,
                                          remove_words,
                                          shell_block_lines,
                                          shell_script_doc,
                                          unresolved,
                                          yaml_value_lines,
)
from codemods._lib.shell.lexer import (
                                          EXPORTERS,
                                          RESERVED,
                                          Tok,
                                          assignment_name,
                                          command_word,
                                          exec_words,
                                          lex,
                                          simple_commands,
                                          unquote,
                                          words_of,
)

__all__ = ["COMMAND_WORDS", "NEURON_CACHE", "OPTIMUM_CLI", "EXPORTERS", "RESERVED", "CommandLine", "EmbeddedCommand", "EnvSite", "Report", "Resolve",
           "Tok", "assignment_name", "code_targets", "command_lines", "command_statements", "command_word", "cut", "drop_line",
           "env_sites", "exec_words", "fill_empty_blocks", "keep_script", "launched_scripts", "lex", "looks_like_command", "next_code",
           "remove_command", "remove_env_site", "remove_words", "shell_block_lines", "shell_script_doc", "simple_commands", "unquote", "unresolved", "words_of",
           "yaml_value_lines"]
