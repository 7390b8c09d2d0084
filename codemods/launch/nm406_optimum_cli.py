"""NM406 optimum-cli-neuron: the ``optimum-cli`` Neuron commands in scripts, Dockerfiles and CI.

What it does:

* ``optimum-cli export neuron -m ID ... OUT``: a ``todo`` (TorchNeuron has nothing to pre-compile): "delete this
  export", or "keep this export until <file> is ported, then delete it" while a project file still loads
  Neuron-compiled folders with optimum-neuron after this run (the NM1xx rules' ``kept_compiled_loads``; which folder
  it reads is not linked, any such load counts; rt5H D3). The
  message names the model, the output directory whose later uses must point at the model id, and where the
  static shapes, ``--auto_cast_type`` and ``--num_cores`` go; with ``--auto_cast matmul`` it says what NM120 does
  at the load of that folder (float32, the outputs' dtype; ``torch.autocast`` or a whole-model ``dtype=`` offered:
  one decision, ``codemods/inference/_casting.py``).
* a decoder export of NM110's compiled-folder round trip (``round_trip`` in ``codemods/inference/_compiled_exports.py``:
  every decoder compiled-folder load of the project reads a path known only at run time, ``args.model_dir``): the
  command is replaced by a stock step that writes the same folder, reported ``fixed`` with a comment line above it
  (none in a Makefile recipe or a notebook ``!`` line) -
  ``python -c "<load the model (its dtype), set the static cache, save the checkpoint and the tokenizer>" MODEL OUT``
  (``stock_step``): config.json carries the dtype of ``--torch_dtype`` / ``--auto_cast_type`` (absent: the
  checkpoint's, as the Python round trip does), generation_config.json ``cache_implementation="static"`` and
  ``max_cache_len`` = ``--sequence_length``, and the tokenizer is saved too (optimum's export saved it), so every
  reader of the folder keeps working whatever its path expression, and NM110 rewrites the loads to
  ``AutoModelForCausalLM.from_pretrained(path, device_map=...)``. The model, the output folder, the sequence length
  and the dtype stay the command's own words, passed as argv (``"$MODEL_ID"``, ``$(OUT)``, IPython's
  ``{model_id}`` keep working; the step's Python holds no ``$``, braces or double quotes, so it is valid in a shell
  script, a Dockerfile ``RUN``, a Makefile recipe and a notebook ``!`` line); a dtype word known only at run time is
  mapped then (bf16/fp16/fp32..., anything else: the checkpoint's). The batch size stays the loads' padding; a
  tensor-parallel degree goes to the loads' todo (torchrun + ``DistributedConfig(tp_size=N)``). A decoder export
  is one with ``--task text-generation`` or ``--num_cores``, or one whose folder only decoder classes of the project
  load by name. The round trip holds only when every decoder export of the project can be replaced so: a model
  word and one output word, ``--sequence_length`` given, every other option one whose meaning is known (the
  shapes, ``--auto_cast``/``--auto_cast_type``/``--torch_dtype``, ``--num_cores``/``--tensor_parallel_size``, the
  drop-list of the migration map section 2.12: ``--instance_type``, ``--compiler_workdir``, ``-O1``..., neither
  ``--trust-remote-code`` nor ``--subfolder``), run as a command of its own in a shell script, Makefile, Dockerfile
  or notebook (not a command string of a Python file or a YAML job), and no export of unknown kind; an encoder,
  seq2seq or diffusion export (another ``--task``, a library other than transformers, a shape no decoder takes)
  does not count and keeps its todo below. Otherwise every export keeps its todo (all or none).
* ``optimum-cli neuron cache ...`` run as a command of a shell script: removed (no Hub compile cache), so that the
  script stays valid and does the rest as before (``remove_command`` in ``codemods._lib.shell``): a line of its
  own goes (with its continuation lines); ``cmd && next`` / ``cmd; next`` / ``prev; cmd`` lose it and its
  operator; a case arm keeps its ``;;`` (``lookup) : ;;``), and an emptied ``then``/``do``/``{``/``(`` body, a
  ``prev && cmd`` / ``prev || cmd`` list or any other place gets ``:`` with a short comment. Where its exit
  status or output is used (an ``if``/``while`` condition, ``!``, a pipeline, ``$(...)``, a heredoc, ``$!``)
  or its extent is unclear (a continued line holding more), a ``todo`` to delete it by hand; in other files a
  ``todo``.
* ``optimum-cli neuron consolidate OUT/shards/ OUT`` (the shards inside the output folder) as a command of a shell
  script (the same way) or a notebook ``!`` line: removed (the stock save already writes OUT consolidated);
* any other ``optimum-cli neuron consolidate ...``: a ``todo`` (stock ``save_pretrained`` needs none; convert legacy
  checkpoints on the old stack first). When later commands of the same file read its output folder (the path as
  written, a path below it, ``--flag=path``, or a variable a later assignment sets to it), the todo names each
  (its command and word) and says to point them at the input folder (its parent for ``.../shards``), where the stock save
  now writes the consolidated checkpoint. They are not rewritten: another file, or a later run, may read the
  output folder too, so the step and its readers change together, by hand.
* ``optimum-cli neuron serve ...``: a ``todo`` with the equivalent ``vllm serve`` command (vLLM-Neuron plugin).
* ``optimum-cli env`` -> ``transformers env``.
* Exec-form commands (``["optimum-cli", "export", ...]``, or ``["/bin/sh", "-c", "optimum-cli export ..."]``) get
  the same todos, and so does a container whose program and arguments are two keys (a Kubernetes ``command:
  ["optimum-cli"]`` with ``args: ["export", "neuron", ...]``, compose's ``entrypoint:`` with ``command:``; flow or
  block lists, quoted items or not), at its program key; command strings inside Python get them through NM410.

Why:

optimum-neuron's CLI compiled models ahead of time for fixed shapes, shared the compiled artefacts through a Hub
cache and served them through its own vLLM platform. On TorchNeuron a model loads with stock
``from_pretrained`` and compiles on first call (``torch.compile(backend="neuron")``), the NEFFs are cached
locally, and serving goes through the vLLM-Neuron plugin.

Before::

    optimum-cli neuron cache set my-org/cache
    case "$1" in
      sync) optimum-cli neuron cache synchronize ;;
    esac
    optimum-cli export neuron -m gpt2 --batch_size 1 --sequence_length 128 gpt2_neuron/

After::

    case "$1" in
      sync) : ;;  # neuron-migrate removed a Hub compile-cache command here (TorchNeuron has no Hub cache)
    esac
    # neuron-migrate: delete this export: TorchNeuron compiles on first call, ...; point later uses of gpt2_neuron/ at gpt2; ...
    optimum-cli export neuron -m gpt2 --batch_size 1 --sequence_length 128 gpt2_neuron/

In a round trip (``chat.py`` loads ``NeuronModelForCausalLM.from_pretrained(args.model_dir)``)::

    optimum-cli export neuron --model "$MODEL_ID" --batch_size 1 --sequence_length "$SEQ_LEN" \
      --num_cores 2 --auto_cast_type fp16 "$OUT_DIR"

becomes::

    # neuron-migrate replaced `optimum-cli export neuron` here: this step saves a stock checkpoint ...
    python -c "import sys, torch; ...from_pretrained(sys.argv[1], dtype=torch.float16); ...max_cache_len=int(sys.argv[3]) ..." "$MODEL_ID" "$OUT_DIR" "$SEQ_LEN"

Safety: needs-review. Deleting an export step is left to the user because later steps read its output.

References:

* https://huggingface.co/docs/optimum-neuron/guides/export_model
* https://huggingface.co/docs/optimum-neuron/guides/cache_system
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

import re

from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods._lib.shell import (
    NEURON_CACHE,
    OPTIMUM_CLI,
    RESERVED,
    CommandLine,
    EmbeddedCommand,
    Report,
    assignment_name,
    command_lines,
    exec_words,
    lex,
    remove_command,
    simple_commands,
    unquote,
    words_of,
    yaml_container_commands,
)
from codemods._lib.shell.make import make_doc
from codemods._tables.inference_arguments import DTYPES
from codemods.inference._casting import matmul_note, matmul_only_cast
from codemods.inference._compiled_exports import (
    CLI_EXPORT_MENTIONS,
    CLI_EXPORT_PATTERN,
    CLI_EXPORTS,
    RoundTrip,
    cli_commands,
    kept_compiled_loads,
    kept_compiled_names,
    round_trip,
    stock_step,
)
from codemods.launch._base import LaunchRule
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument

_OPTIMUM_CLI = re.compile(OPTIMUM_CLI + rf"(export\s+neuronx?|{NEURON_CACHE}|neuron\s+(?:consolidate|serve)|env)\b")


def _option(words: list[str], *names: str) -> str | None:
    for index, word in enumerate(words):
        for name in names:
            if word == name and index + 1 < len(words):
                return words[index + 1]
            if word.startswith(name + "="):
                return word[len(name) + 1:]
    return None


def _positionals(words: list[str], skip: int) -> list[str]:
    out, index = [], skip
    while index < len(words):
        word = words[index]
        if word.startswith("-"):
            index += 1 if "=" in word or word in _FLAG_ONLY else 2
            continue
        out.append(word)
        index += 1
    return out


_FLAG_ONLY = {"--disable-validation", "--inline-weights-neff", "--disable-weights-neff-inline", "--disable_neuron_cache",
              "--dynamic-batch-size", "--trust-remote-code", "--output_attentions", "--output_hidden_states", "-O1", "-O2",
              "-O3", "--disable-fast-relayout", "--disable-fallback", "--public", "--allow_non_cached_model",
              "--allow-non-cached-model"}


def export_todo(words: list[str], kept: tuple[str, ...] = ()) -> str:
    """The todo for ``optimum-cli export neuron`` (words: the argv after ``optimum-cli``; ``kept``: the project's
    compiled-folder loads that stay on optimum-neuron after this run, ``kept_compiled_loads``)."""
    # the model may sit in a part of the command this line does not show (a string built piece by piece)
    model = _option(words, "-m", "--model") or "the model it exported (its --model)"
    positional = _positionals(words, 2)
    output = positional[-1] if positional else None
    shapes = [f"{flag}={value}" for flag in ("--batch_size", "--sequence_length", "--height", "--width", "--num_images_per_prompt")
              if (value := _option(words, flag)) is not None]
    dtype = _option(words, "--auto_cast_type", "--torch_dtype")
    cores = _option(words, "--num_cores", "--tensor_parallel_size")
    lead = "delete this export"
    if kept:  # rt5H D3: the kept optimum-neuron code may read what it writes (the folder is not linked: any counts)
        lead = (f"keep this export until {kept_compiled_names(kept)} {'is' if len(kept) == 1 else 'are'} ported "
                f"({'it still loads' if len(kept) == 1 else 'they still load'} Neuron-compiled folders with "
                "optimum-neuron after this run, which may be the one this writes); then delete it")
    steps = [f"{lead}: TorchNeuron compiles on first call, there is nothing to pre-compile; load {model} "
             f"with from_pretrained (optionally torch.compile(backend=\"neuron\"))"]
    if output:
        steps.append(f"point later uses of {output} at {model}")
    if shapes:
        steps.append(f"keep {' '.join(shapes)} as fixed input padding/batch size")
    auto_cast = _option(words, "--auto_cast")
    cast_type = _option(words, "--auto_cast_type") or "bf16"  # optimum-cli's default --auto_cast_type
    mapped = DTYPES.get(cast_type.lower())
    if matmul_only_cast(auto_cast, mapped) and mapped is not None:  # the load NM120 writes for this folder
        steps.append(matmul_note(mapped, f"--auto_cast matmul --auto_cast_type {cast_type}"))
    elif dtype:
        steps.append(f"--auto_cast_type/--torch_dtype {dtype} -> dtype= at load")
    if cores:
        steps.append(f"{cores} cores -> DistributedConfig(tp_size={cores}) under torchrun")
    return "; ".join(steps)




def edit_optimum_cli(doc: TextDocument, report: Report, kept: tuple[str, ...] = (),
                     trip: RoundTrip | None = None, comment: bool = True) -> None:
    """``trip``: the project's round trip when this file's decoder exports are among its exporters (NM406 writes
    the stock step for each); ``comment``: a comment line may go above a replaced command (not in a notebook's
    ``!`` line)."""
    all_lines = list(command_lines(doc))
    # a container whose program and arguments are two keys (`command: ["optimum-cli"]` + `args: ["export", ...]`)
    containers = {id(line): words for line, words in yaml_container_commands(doc)}
    reported: set[int] = set()
    for position, cl in enumerate(all_lines):
        line = cl.line
        if line.deleted:
            continue
        code = line.text[cl.start:cl.end]
        for later in all_lines[position + 1:]:  # the command's continuation lines carry more flags
            if not later.continued or not code.rstrip().endswith("\\"):
                break
            code = code.rstrip()[:-1] + " " + later.line.text[later.start:later.end]
        if trip is not None and not cl.exec_form and _write_stock_step(doc, all_lines, position, report, trip, comment):
            continue
        if cl.exec_form or id(line) in containers:
            words = _cli_words(containers.get(id(line)) or exec_words(code))
            if words:
                report(line, Severity.TODO, export_todo(words[1:], kept) if words[1:2] == ["export"] else EXEC_TODO)
                reported.add(id(line))
            continue
        match = _OPTIMUM_CLI.search(code)
        if not match:
            continue
        words = [unquote(word) for word in words_of(code[match.start():])]
        words = words[1:] if words and words[0].endswith("optimum-cli") else words
        verb = match.group(1).split()
        if verb[0] == "export":
            report(line, Severity.TODO, export_todo(words, kept))
        elif verb[0] == "env":
            start = cl.start + match.start()
            line.text = line.text[:start] + "transformers env" + line.text[start + len(match.group(0)):]
            report(line, Severity.FIXED, "`optimum-cli env` -> `transformers env`")
        elif verb[1] == "cache":
            if _remove_cli(doc, cl, "cache", CACHE_COMMENT):
                report(line, Severity.FIXED, "removed `optimum-cli neuron cache ...`: there is no Hub compile cache on "
                       "TorchNeuron (NEFFs are cached locally in TORCH_NEURONX_NEFF_CACHE_DIR)")
            else:
                report(line, Severity.TODO, "delete `optimum-cli neuron cache ...`" + _why_kept(doc, cl) + ": there is "
                       "no Hub compile cache on TorchNeuron (NEFFs are cached locally in TORCH_NEURONX_NEFF_CACHE_DIR)")
        elif verb[1] == "consolidate":
            folders = [folder.rstrip("/") for folder in _positionals(words, 2)]
            # shards under the output folder (``consolidate out/shards/ out``): the migrated stock save writes
            # the consolidated checkpoint to that output folder itself, so the step has nothing left to do
            in_place = len(folders) == 2 and (folders[0] == folders[1] or folders[0].startswith(folders[1] + "/"))
            if in_place and _remove_cli(doc, cl, "consolidate", CONSOLIDATE_COMMENT):
                report(line, Severity.FIXED, f"removed `optimum-cli neuron consolidate` of {folders[0]}/ into "
                       f"{folders[1]}: the stock save_pretrained / Trainer save already writes a consolidated "
                       f"checkpoint to {folders[1]} (checkpoints saved by optimum-neuron need this step once, on the "
                       "old stack)")
            else:
                reads = _later_reads(all_lines, position, folders[1]) if len(folders) == 2 else []
                report(line, Severity.TODO, "delete `optimum-cli neuron consolidate`: stock save_pretrained already "
                       "writes a consolidated checkpoint; convert checkpoints saved by optimum-neuron once, on the old "
                       "stack, before uninstalling it" + (_reads_note(folders[0], folders[1], reads) if reads else ""))
        else:  # serve
            model = _option(words, "-m", "--model") or "MODEL_ID"  # a placeholder the todo asks to fill
            flags = [f"--tensor-parallel-size {v}" for v in [_option(words, "--tensor_parallel_size", "--tensor-parallel-size")] if v]
            flags += [f"--max-num-seqs {v}" for v in [_option(words, "--batch_size", "--batch-size")] if v]
            flags += [f"--max-model-len {v}" for v in [_option(words, "--sequence_length", "--sequence-length")] if v]
            flags += [f"--port {v}" for v in [_option(words, "--port")] if v]
            report(line, Severity.TODO, f"replace with `vllm serve {' '.join([model, *flags])}` with the vLLM-Neuron "
                   "plugin installed (optimum-neuron's vLLM platform is gone)"
                   + ("; MODEL_ID: the model this command serves (its --model)" if model == "MODEL_ID" else ""))


    for line, words in yaml_container_commands(doc):  # a block list `command:` holds no command on its own line
        if id(line) not in reported and (cli := _cli_words(words)):
            report(line, Severity.TODO, export_todo(cli[1:], kept) if cli[1:2] == ["export"] else EXEC_TODO)


EXEC_TODO = "optimum-cli Neuron command: see `neuron-migrate --explain NM406` for what replaces it"
_SHELLS = {"sh", "bash", "dash", "zsh"}


def _cli_words(words: list[str]) -> list[str]:
    """The argv of the optimum-cli Neuron command a list of words runs: the list itself (``["optimum-cli",
    "export", ...]``), or the one command of the script after ``sh -c`` that is one (``["/bin/sh", "-c",
    "optimum-cli export neuron ... && echo ok"]``); [] when none (or more than one)."""
    if words and words[0].rsplit("/", 1)[-1] == "optimum-cli":
        return words if _OPTIMUM_CLI.search(" ".join(words)) else []
    if len(words) < 3 or words[0].rsplit("/", 1)[-1] not in _SHELLS or not re.fullmatch(r"-[a-z]*c", words[1]):
        return []
    found = [[unquote(tok.text) for tok in command] for command in simple_commands(lex(words[2])[0])]
    found = [command for command in found if command and command[0].rsplit("/", 1)[-1] == "optimum-cli"
             and _OPTIMUM_CLI.search(" ".join(command))]
    return found[0] if len(found) == 1 else []


#: the comment above a decoder export NM406 replaced by the stock step (no ``neuron-migrate:`` note: nothing to do)
STEP_COMMENT = ("neuron-migrate replaced `optimum-cli export neuron` here: this step saves a stock checkpoint (weights, "
                "tokenizer, config.json with the dtype, generation_config.json with the static cache) into the same "
                "folder; TorchNeuron compiles on the first generate")


def _write_stock_step(doc: TextDocument, all_lines: list[CommandLine], position: int, report: Report,
                      trip: RoundTrip, comment: bool) -> bool:
    """The decoder ``optimum-cli export neuron`` of the command starting at ``all_lines[position]`` (with its
    continuation lines) replaced by ``stock_step`` (``_compiled_exports.py``), the rest of the line as it was; True
    when it was. Only a command of its own (the one mention of the export on its logical line), a decoder export
    NM406 can write the step for (``CliExport.why_kept`` None); anything else is left to the todo."""
    segments = [all_lines[position]]
    for later in all_lines[position + 1:]:
        last = segments[-1]
        if not later.continued or not last.line.text[last.start:last.end].rstrip().endswith("\\"):
            break
        segments.append(later)
    joined, owners = "", []  # the logical line, and (segment, column) of each of its characters
    for number, segment in enumerate(segments):
        text = segment.line.text[segment.start:segment.end]
        if number < len(segments) - 1:
            text = text.rstrip()[:-1] + " "
        joined += text
        owners += [(number, segment.start + column) for column in range(len(text))]
    toks, end = lex(joined)
    if len(re.findall(r"(?<![\w-])optimum-cli\s+export\s+neuronx?\b", joined[:end])) != 1:
        return False
    found = cli_commands(toks)
    if len(found) != 1:
        return False
    command, index, export = found[0]
    if export.family != "decoder" or export.why_kept() is not None:
        return False
    first = command[index]
    start = first.start + len(first.text) - len(first.text.lstrip("@-+"))
    last = command[index + 2 + export.end]
    first_segment, first_column = owners[start]
    last_segment, last_column = owners[last.end - 1]
    head = segments[first_segment].line
    tail = segments[last_segment].line
    step = stock_step(export)
    head.text = head.text[:first_column] + step + tail.text[last_column + 1:]
    for segment in segments[first_segment + 1:last_segment + 1]:
        doc.delete(segment.line)
    start_line = doc.statement_start(segments[0].line) if doc.kind in (FileKind.SHELL, FileKind.DOCKERFILE) \
        else segments[0].line
    if comment and not make_doc(doc) and doc.kind in (FileKind.SHELL, FileKind.DOCKERFILE):
        doc.insert_before(start_line, [start_line.indent + "# " + STEP_COMMENT])
    model, output = export.model or "", export.output or ""
    dtype = f"in {unquote(export.dtype)}" if export.dtype is not None else \
        "in the checkpoint's dtype (--auto_cast_type not given: optimum compiled in fp32 <= 0.1.0, bf16 0.2.0-0.3.0)"
    batch = export.options.get("--batch_size")
    notes = [f"batch size {unquote(batch)}: the loads pad to it as before, stock generate batches statically"] \
        if batch is not None else []
    if export.degree is not None:
        notes.append(f"tensor parallel degree {unquote(export.degree)}: the loads get a todo to launch under torchrun "
                     "with DistributedConfig(tp_size=N)")
    report(segments[0].line, Severity.FIXED,
           f"`optimum-cli export neuron` of the decoder {unquote(model)} -> a stock step writing {unquote(output)}: "
           f"it saves the checkpoint {dtype}, its tokenizer, and generation_config.json with the static cache "
           f"(max_cache_len {unquote(export.options['--sequence_length'])}), which {trip.loader_names()} now "
           f"load{'s' if len(trip.loaders) == 1 else ''} with AutoModelForCausalLM.from_pretrained (nothing is pre-compiled on TorchNeuron: generate "
           "compiles on the first call; a folder the old export wrote holds Neuron-compiled artifacts: run this "
           "step again)" + "".join(f"; {note}" for note in notes))
    return True


#: the comment after a ``:`` written where a removed command leaves a block (or a case arm) with none
CACHE_COMMENT = "neuron-migrate removed a Hub compile-cache command here (TorchNeuron has no Hub cache)"
CONSOLIDATE_COMMENT = "neuron-migrate removed a checkpoint consolidation here (the stock save writes it whole)"


def _cli_commands(doc: TextDocument, cl: CommandLine, verb: str) -> list[tuple[list, list]]:
    """(simple command, the line's words) of each ``optimum-cli neuron <verb>`` command on the line (run as the
    command itself, after any ``NAME=value`` settings or reserved words; a Makefile recipe's ``@``/``-`` too)."""
    toks, _ = lex(cl.line.text, cl.start, cl.end)
    found = []
    for command in simple_commands(toks):
        words = [unquote(tok.text) for tok in command if tok.text not in RESERVED and not assignment_name(tok.text)]
        program = words[0].lstrip("@-+") if words and make_doc(doc) else words[0] if words else ""
        if len(words) >= 3 and program.rsplit("/", 1)[-1] == "optimum-cli" and words[1:3] == ["neuron", verb]:
            found.append((command, toks))
    return found


def _remove_cli(doc: TextDocument, cl: CommandLine, verb: str, comment: str) -> bool:
    """Delete the ``optimum-cli neuron <verb>`` command of the line through ``remove_command`` (the script stays
    valid and does the same without it); False, with nothing changed, when the line holds it some other way
    (inside ``$(...)``, quoted), more than once, or where it cannot go (a condition, a pipeline)."""
    if doc.kind is not FileKind.SHELL:
        return False
    _, end = lex(cl.line.text, cl.start, cl.end)
    mentions = re.findall(rf"(?<![\w-])optimum-cli\s+neuron\s+{verb}\b", cl.line.text[cl.start:end])
    commands = _cli_commands(doc, cl, verb)
    return len(mentions) == len(commands) == 1 and remove_command(doc, cl, *commands[0], comment)


def _why_kept(doc: TextDocument, cl) -> str:
    """Why a cache command in a shell script stays (the todo's words), empty elsewhere."""
    if doc.kind is not FileKind.SHELL:
        return ""
    return (" by hand (its exit status or output is used here, or it is not a command of its own; deleting it "
            "would change what the script does)")


def _normal(word: str) -> str:
    """``${CKPT}/x/`` as ``$CKPT/x``: one spelling of a path for comparing words."""
    return re.sub(r"\$\{([A-Za-z_]\w*)\}", r"$\1", word).rstrip("/")


def _later_reads(all_lines: list, position: int, output: str) -> list[tuple[str, str]]:
    """(command, word) of each later command word of the file that reads the consolidate's ``output`` folder (the
    path, or below it; ``--flag=path`` too), or a variable a later assignment sets to it (``MERGED=$CKPT/out``,
    then ``$MERGED``): with the consolidate gone, nothing writes that folder. ``command``: the command's first
    words (``python merge.py``), which a note above the line does not change (a line number would)."""
    names = {_normal(output)}
    found: list[tuple[str, str]] = []
    lines = all_lines[position + 1:]
    while lines and lines[0].continued:  # the consolidate command's own continuation lines
        lines = lines[1:]
    for cl in lines:
        toks, _ = lex(cl.line.text, cl.start, cl.end)
        for command in simple_commands(toks):
            words = [unquote(tok.text) for tok in command if not re.match(r"^[A-Za-z_]\w*=", tok.text)]
            program = " ".join(words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1])
            for tok in command:
                word = unquote(tok.text)
                name = re.match(r"^([A-Za-z_]\w*)=(.*)$", word)
                if name and any(_normal(name.group(2)) == n or _normal(name.group(2)).startswith(n + "/") for n in names):
                    names.add("$" + name.group(1))  # the variable now holds the path: its reads count
                    continue
                value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
                if any(_normal(value) == n or _normal(value).startswith(n + "/") for n in names):
                    found.append((program, word))
    return found


def _reads_note(source: str, output: str, reads: list[tuple[str, str]]) -> str:
    """What the consolidate todo adds about the later reads of its output folder."""
    target = source.rsplit("/", 1)[0] if source.endswith("/shards") and "/" in source else source
    shown = ", ".join(f"`{program}` ({word})" for program, word in reads)
    return (f"; later commands of this file read its output {output}: {shown}. Once this line is deleted nothing "
            f"writes {output}: point them at {target}, where the stock save now writes the consolidated checkpoint")


class OptimumCliNeuron(LaunchRule):
    """Handle optimum-cli export neuron / neuron cache / consolidate / serve / env commands."""

    id = "NM406"
    name = "optimum-cli-neuron"
    safety = Safety.NEEDS_REVIEW
    triggers = ("optimum-cli",)

    # the optimum.neuron files: a kept compiled-folder load keeps the export; the project's optimum-cli exports: the
    # round trip (NM110's, fxL) replaces its decoder ones by a stock step
    facts = (OPTIMUM_NEURON_CODE, CLI_EXPORTS, CLI_EXPORT_MENTIONS)

    def apply(self, doc: TextDocument) -> None:
        # the file's own loads are left out: simulating this file inside its own run would decide its deps notes
        # without the rest of the run (a notebook that exports and loads: a second run changed its pip note)
        here = str(self.ctx.path).replace("\\", "/")
        cell = re.fullmatch(r"(.*)\.cell\d+\.sh", here)  # a notebook's shell line or cell
        trip = round_trip(self.ctx.options) if CLI_EXPORT_PATTERN.search(doc.text()) else None
        if trip is not None and (cell.group(1) + ".ipynb" if cell else here) not in trip.cli_exporters:
            trip = None
        edit_optimum_cli(doc, self.report, kept_compiled_loads(self.ctx.options, here), trip, comment=cell is None)

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_optimum_cli(doc, report)
