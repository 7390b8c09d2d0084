"""NM501 requirements-neuron-stack: move requirements files from optimum-neuron / PyTorch-XLA to TorchNeuron.

What it does:

Per requirement line (the decisions, in ``codemods/deps/_plan.py``, are shared with every dependency rule):

* ``optimum-neuron[...]`` / ``optimum[neuronx]`` (any pin, also VCS URLs) -> ``torch-neuronx==2.14.*``,
  ``torch==2.14.*``, ``transformers>=5.24``, ``accelerate>=1.15`` plus what its extras pulled in
  (``[training]``: trl, peft, datasets; ``[diffusers]``: diffusers, peft; ``[sentence-transformers]``) and the
  packages it brought in that the code it serves imports (trl, peft, datasets, diffusers, sentence-transformers:
  project fact ``deps.imports``), the migrated code included (an optimum-neuron class whose stock replacement lives
  in one of them, ``NeuronSFTTrainer`` -> ``trl.SFTTrainer``), skipping packages the file already lists and those a
  file it includes with ``-r`` lists, at any depth (``-r base.txt`` with ``transformers``: that line is decided
  there; a ``-c`` constraints file installs nothing, so it does not count; project fact ``deps.requirement-set``);
  ``[vllm]`` and the Inf1 ``[neuron]`` extra get a ``todo``;
* optimum-neuron stays, with a ``todo`` naming the files, while code it serves evaluates a string that names its
  import (``eval(f"optimum.neuron.NeuronModelFor{task}")``: NM102 keeps that import, project fact
  ``deps.optimum-neuron-kept``); every other pin of the file stays with it, each with a ``todo`` (moving them alone
  gives an environment pip cannot resolve). The code a file serves, the same for every dependency rule (NM501-NM506,
  ``_plan.served_folder``): the files in its folder and below (a SageMaker ``source_dir``, one sample of a samples
  repository; for a file of a ``requirements/``, ``reqs/``, ``deps/``, ``envs/``, ``conda/`` ... folder, the folder
  above it, so ``requirements/neuron.txt`` serves the project's ``src/``; at the root, the whole project) and the
  Python files it names (project fact ``deps.mentions``: a notebook that runs ``../scripts/run_sft.py``). A file that
  install lines tie to scripts serves those scripts instead of its folder's Python files: every install context
  whose ``pip install -r`` reads it (a launcher or Makefile, a Dockerfile stage, a workflow job) runs scripts of the
  project it names and nothing it does not name (a module, a server, pytest, a shell script, a notebook): it serves
  those scripts and the project files they import, at any depth (project facts ``deps.install-runs``,
  ``deps.local-imports``; ``train.sh`` runs ``pip install -r requirements-train.txt`` then ``torchrun train.py``,
  ``serve.sh`` installs ``requirements-inference.txt`` for ``chat.py``, which stays on optimum-neuron: the first is
  moved, the second kept). The files a notebook writes with
  ``%%writefile`` cells count as files of the notebook's folder (project fact ``deps.notebook-files``,
  ``codemods/deps/_notebooks.py``): a ``%%writefile src/requirements.txt`` cell serves the
  ``%%writefile src/compile.py`` cell beside it, whose imports and kept evals count like those of a file;
* optimum-neuron stays the same way while a Python file or notebook of the code it serves still imports
  ``optimum.neuron`` after the run (an import no rule could port, NM901's todo; NM205's kept lazy-load block; a
  file kept on optimum-neuron as a whole): the file is migrated the way this run migrates it (its rules, the
  project facts: project fact ``deps.optimum-neuron-code``) to see whether the import survives; the todo names
  those files (without the package: ``ModuleNotFoundError: No module named 'optimum'``). When every such file is a
  one-time converter (its optimum.neuron imports bind only the checkpoint consolidators NM206 says to run "in the
  OLD environment before uninstalling optimum-neuron"; it cannot be ported first), it holds nothing (rt7L L14): the
  file moves, and its optimum-neuron line is a ``todo`` that names the converters and the old pins it no longer
  installs, to keep in the folder's ``requirements-legacy.txt`` (or create it with them); that legacy file itself
  (a requirements file whose name says ``legacy``) is left as it is, with a ``todo`` to run the converters from
  it and then delete it. Any other importer beside a converter holds the file as above;
* optimum-neuron stays too, with a ``todo`` tied to the command, while the notebook a requirement cell belongs to
  still runs ``optimum-cli export`` / ``optimum-cli neuron serve`` in its cells (NM406 keeps those with a todo;
  project fact ``deps.optimum-cli``): replaced, the notebook fails with ``optimum-cli: command not found``; the
  other pins of the file stay with it, as above. Such a command in another file of the code it serves (a shell
  script or Makefile such as ``run_compile.sh``, a Dockerfile, a CI workflow, a Python command string) holds
  nothing: NM406's todo there says to delete or replace it, and holding the old stack for it would keep the
  migrated Python beside it off the new one (redteam-round2 D5); the line is replaced, as a ``todo`` that names
  that command (never a ``fixed`` while it is there). A commented-out or echoed command, one NM406 removes
  (``optimum-cli neuron cache``), and one in a folder the file does not serve count for nothing. The todo on a
  kept optimum-neuron also names the other files it installs for that this run rewrites to calls only the new
  stack has (``torch.accelerator``, the ``neuron`` device, ``DistributedConfig``; read on each file as the run
  migrates it, project fact ``deps.old-stack``, so a second run names the same), each with what it calls and the
  release that needs (``torch.accelerator``: torch>=2.6; ``processing_class=``: transformers>=4.46;
  ``from_pretrained(dtype=)``: transformers>=4.56; ``CompileConfig``; ``DistributedConfig`` /
  ``distributed_config``: transformers 5) where this file's pins exclude it: no pin of one file serves both, so the
  todo says which files keep the old stack and how to split the file (give the moved files a requirements file of
  their own with this file's lines as the run moves them when nothing holds them, and install it where they run),
  and, when no install line ties the file to scripts, that it counts for every Python file of its folder (rt-D1
  lora-llama-tp: requirements.txt kept on transformers 4.41 for chat.py while train.py and merge.py moved to
  transformers 5 APIs, with a todo that named only train.py and torch). A file the run leaves on calls the old pins
  have (plain torch, a stock ``Trainer``) is not named (rt4D 10);
* one install set takes one decision: when a requirements file keeps its optimum-neuron (any of the reasons
  above), every file of its install set (those it includes with ``-r`` / ``-c``, those that include it, those
  that one ``pip install`` command reads with it, ``pip install -r requirements.txt -c constraints.txt`` in a
  script, Dockerfile, workflow or notebook, and those that the other ``pip install`` commands of the same install
  context install: one Dockerfile stage, from its ``FROM`` (one ``RUN`` chain or separate ``RUN`` lines), one
  workflow job (a workflow under ``.github/`` serves its whole repository), one shell script, manifest or
  notebook: project fact ``deps.pip-install-sets``, and theirs in turn: project fact ``deps.requirement-set``,
  which carries the text of a file naming optimum-neuron) is left as it is too, each pin the plan would have
  changed with a ``todo`` naming that file and why it keeps the package (rt3A glue-trn: ``constraints.txt``,
  included with ``-c`` by a ``requirements.txt`` that keeps ``optimum-neuron[neuronx]==0.0.25`` for
  ``run_glue.py``, was moved to torch 2.14 / transformers 5, and ``pip install -r requirements.txt`` could not
  resolve both); the same when a ``pip install`` command of such a context names the package and keeps it,
  decided as NM505 decides it (rt5H D2: ``RUN pip install optimum-neuron==0.0.24 && pip install -r
  requirements.txt`` for an app/main.py that still imports optimum.neuron moved the requirements file's
  ``transformers==4.43.2`` to ``>=5.24``, which optimum-neuron 0.0.24's ``transformers==4.41.1`` does not admit:
  the kept import raised, and on the image's Python 3.10 pip found no such transformers); when that
  optimum-neuron is migrated, the files of its set are migrated as before;
* an include of a file whose name is no requirements name (``-r base.txt``, ``-c pins.txt``; resolved from this
  file's folder, so ``requirements/base.txt`` is one): the run does not read that file, so it stays as it was
  while this one is migrated; the include line gets a ``todo`` saying so and what to do (the same decisions by
  hand, or a requirements name and another run), in a Neuron project or a file naming a Neuron package;
* XLA-era ``torch-neuronx`` builds (e.g. ``2.1.2.2.0.0``, ``2.8.0.2.10.16998``) -> ``torch-neuronx==2.14.*``
  (same package name, native backend: only the version tells them apart); ``torch`` pins below 2.14 follow. Such a
  pin stays, with a ``todo`` naming the files and what they use, while code it serves still uses the XLA-era
  torch_neuronx API after the run (rt8Q-03; migrated the way this run migrates it: NM330 leaves
  ``torch_neuronx.trace`` / ``DataParallel`` / ``move_trace_to_device`` / ``analyze`` ... with a todo, and a
  ``torch.jit.load`` beside a torch_neuronx import that is no TorchNeuron use loads a traced artifact; TorchNeuron's
  own ``nki_op`` / ``wrap_nki`` / ``get_fallback_ops`` ..., comments and notes, and an import under ``try: ...
  except ImportError`` do not count; project fact ``deps.xla-neuronx-code``): the TorchNeuron build has none of
  that API. The pins beside it (torch, neuronx-cc, the stock pins, optimum-neuron) stay with it, each with a
  ``todo``, and its todo names the other files it installs for that this run moved to calls only the new stack has,
  with the split advice, as for torch-xla below;
* ``torch-xla``, ``libneuronxla``, ``neuronx-distributed*``, ``transformers-neuronx``: removed; a
  neuronx-distributed / transformers-neuronx line the project's code still imports stays, with a ``todo`` naming
  the importing files (project fact ``deps.imports``); ``torch-xla`` stays, with a ``todo`` naming the files, while
  code it serves still uses torch_xla after the run (migrated the way this run migrates it: a torch_xla call no
  rule ports, a Ray ``TorchXLAConfig``; an optional import does not count: one under ``try: ... except
  ImportError`` or ``if is_torch_xla_available():`` / ``importlib.util.find_spec("torch_xla")`` / a flag set
  from such a check; a kept ``neuronx_distributed`` import counts, NxD imports torch_xla itself: rtG G5, NxD 0.10
  beside torch 2.14; project fact ``deps.torch-xla-code``), and the XLA-era pins beside it (torch-neuronx, torch,
  optimum-neuron) stay with it, each with a ``todo`` (torch-xla X.Y needs torch X.Y); its todo, like a kept
  optimum-neuron's, names the other files it installs for that this run rewrites to calls only the new stack has
  (final4-E 2: xla-llama-dp's ``src/train.py``, on ``torch.accelerator``, installed by a requirements.txt kept on
  torch 2.1 for two other scripts);
* an import of ``optimum.exporters.neuron`` (the exporter's Python API, ``main_export``) is an import of
  optimum-neuron like ``optimum.neuron``'s: a file that keeps it holds the package (rtF);
* a file that names no package of the old stack but installs for code that stays on it after this run (the
  XLA-era torch_neuronx API, torch_xla or optimum.neuron: no rule could port it; a one-time converter aside) while
  none of the code it installs for moves to what only the new stack has (rtD D3: a SageMaker
  ``code/requirements.txt`` with ``transformers==4.36.2`` beside the ``code/inference.py`` a notebook writes, left
  on ``torch.jit.load`` of a traced artifact; the container brings torch-neuronx and its torch): its lines stay,
  each one the plan would move with a ``todo`` naming that code (transformers 5 alone would serve nothing the run
  migrated and break what stays). Python files a notebook writes with ``%%writefile`` count like files on disk,
  here and for the holds above (a written ``src/compile.py`` that still imports optimum.neuron holds the written
  ``src/requirements.txt`` beside it);
* ``neuronx-cc`` older than the SDK 2.33 compiler -> ``neuronx-cc==2.28.*`` with a ``todo``;
* pins of the stock packages that exclude the tested release (``transformers==4.x``, ``trl==0.x``, ``peft``,
  ``accelerate``, ``diffusers``, ``sentence-transformers``) -> the tested minimums; the note says what the pin is
  (the project's own, "pinned beside optimum-neuron" only when it is), never "an optimum-neuron pin";
  a ``torchvision`` pin that excludes the release built for the new torch -> that release (``torchvision==0.29.*``
  for torch 2.14: each torchvision release requires one torch line, so the old pin makes the file unresolvable);
  ``torchaudio`` pins get a ``todo`` (its releases stopped at 2.11);
  ``optimum`` beside optimum-neuron gets a ``todo`` (it was optimum-neuron's dependency);
* an Inf1 requirement set (a file naming ``torch-neuron``, ``neuron-cc``, ``tensorflow-neuron`` or the Inf1 extra
  ``optimum[neuron]`` / ``optimum-neuron[neuron]``): left as it is, every line of it (its optimum-neuron and stock
  pins too), with one ``todo`` on its first Inf1 package: Inf1 has no TorchNeuron path, and the TorchNeuron stack
  added beside those packages gives a set pip cannot resolve (torch-neuron pins torch 1.13); so is a file that a
  notebook NM101 leaves as an Inf1 flow writes with ``%%writefile`` (its ``%pip`` lines too, NM505);
* the requirement set of another accelerator (its name says so: ``requirements-gpu.txt``, ``requirements_cuda.txt``,
  ``requirements-cu121.txt``, ``-rocm``, ``-cpu``, ``-mps``, ``-tpu``, ``-xpu``; it names no Neuron package; a
  requirements file of its folder does, such as ``requirements-neuron.txt``: project fact
  ``deps.requirement-set``): left as it is, every line of it (its torch, stock pins and torch-xla too), since no
  Neuron reason applies there. When the plan would have changed one of its pins and it installs for code that the
  run rewrites to calls only the new stack has (as above: the torch_xla ports call ``torch.accelerator``, new in
  torch 2.6), one ``todo`` on the first such line names that code and those pins, so the reviewer raises only the
  floors it needs, and says what this run does with the Neuron file beside it, decided as that file's own
  migration decides it (it migrates it, or leaves it on the old stack and why; project fact
  ``deps.requirement-set`` carries the text of a file naming a Neuron package);
* a pin the migrated stack cannot be installed beside (``huggingface_hub==0.24``, ``tokenizers<0.20``, a
  ``numpy`` below trl's floor) gets the floor that the packages the file installs require
  (``codemods/_tables/stock_floors_data.py``, generated from their Requires-Dist); so does a pin with no wheels
  for the Python the stack needs (transformers 5.24 requires Python 3.11, numpy has cp311 wheels from 1.23.2 on, so
  ``numpy<=1.20.0`` -> ``numpy>=1.23.2``; ``PYTHON_WHEELS`` in ``codemods/_tables/requirements_data.py``); a
  ``todo`` when the bump crosses a major version of a package the project's code imports;
* when torch-neuronx is written and no index option names the Neuron repository, the line ``--extra-index-url
  https://pip.repos.neuron.amazonaws.com`` is written above the file's first requirement (``fixed``): the AWS
  packages come from AWS's Neuron package repository, not PyPI, and pip reads the option for every install of the
  file, so a Dockerfile's ``pip install -r requirements.txt`` and tox's ``deps = -r requirements.txt`` resolve
  (rt8P-05: a todo alone left them failing on "No matching distribution found for torch-neuronx"). pip reads
  the options of all the files of one install together, so an index option counts in a file this one includes
  with ``-r`` / ``-c`` too, or in the files that include it (each of them: a ``constraints.txt`` that only
  ``requirements.txt``, whose first line is ``--extra-index-url https://pip.repos.neuron.amazonaws.com``, includes
  with ``-c`` gets no line; project fact ``deps.requirement-set``).

Markers (``; python_version ...``), trailing comments, ``-r`` includes and ``--extra-index-url`` lines are kept.
Lines with ``--hash`` are left alone (the hashes would no longer match). torch-xla and stock pins are touched
only in files that name a Neuron package or in Neuron projects, so a TPU project's torch-xla stays. Requirement
files by name: ``requirements*.txt/.in``, ``*_requirements.txt``, ``constraints*.txt``, files under
``requirements/`` and ``reqs/``.

Why:

optimum-neuron ran on PyTorch/XLA through the XLA-era ``torch-neuronx``; TorchNeuron is a native PyTorch
backend published under the same package name, which runs stock transformers 5 and accelerate. The XLA
packages have no use there (and while torch-xla is installed transformers still takes its XLA branches);
torch-neuronx X.Y.* must be installed beside torch X.Y.*; optimum-neuron's pins of the stock libraries
(transformers 4.x, trl 0.x) cannot be installed beside transformers 5.

Before::

    optimum-neuron[training]==0.0.25  # recipe pin
    torch-xla==2.1.2

After::

    --extra-index-url https://pip.repos.neuron.amazonaws.com
    torch-neuronx==2.14.*  # recipe pin
    torch==2.14.*
    transformers>=5.24
    accelerate>=1.15
    trl>=1.16
    peft>=0.21
    datasets

Safety: needs-review. The reviewer checks the package repository (AWS's, not PyPI), the torch line (2.13 or
2.14, whichever the deployment's SDK has) and the compiler pin; the ``todo`` lines name what was left.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
* https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.0/release-notes/components/index.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/troubleshooting.html
* https://pip.pypa.io/en/stable/reference/requirements-file-format/
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from codemods.deps import _plan as plan
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule, rewrite_lines, split_requirement_line
from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class RequirementsNeuronStack(DepsTextRule):
    """Rewrite optimum-neuron / torch-xla / XLA-era torch-neuronx requirements to the TorchNeuron stack."""

    id = "NM501"
    name = "requirements-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.REQUIREMENTS})
    triggers = DEP_TRIGGERS

    def apply(self, doc: TextDocument) -> None:
        items = []
        for line in doc:
            span = split_requirement_line(line.text)
            if span is not None:
                items.append((line, *span))
        rewrite_lines(doc, items, self.report, self.ctx.options, self.ctx.path.as_posix(), index_line=True)
        specs = [parsed for line, start, end in items if (parsed := plan.parse(line.text[start:end]))]
        if self.ctx.options.neuron_project or any(plan.names_neuron_package(parsed) for parsed in specs):
            self._unread_includes(doc)

    def _unread_includes(self, doc: TextDocument) -> None:
        """An include (``-r base.txt``, ``-c pins.txt``) of a file this run does not read as a requirements file (its
        name is not one: discovery does not pick it up) gets a todo: pip installs it with this file, and the run
        left it as it was (an optimum-neuron 0.0.x there pins transformers 4 beside this file's transformers 5)."""
        for line in doc:
            match = _INCLUDE.match(line.text)
            if match is None or "://" in match.group(2) or "$" in match.group(2):
                continue
            name = match.group(2)
            if kind_from_name(PurePosixPath(self.ctx.path.as_posix()).parent / name) is FileKind.REQUIREMENTS:
                continue
            self.report(line, Severity.TODO, f"{name}, which this file includes with {match.group(1)}, is installed "
                        "with it, but neuron-migrate does not read it as a requirements file (its name is not one: "
                        "requirements*.txt / *.in, constraints*.txt, files under requirements/), so this run left it "
                        "as it was: give its lines the same decisions by hand (optimum-neuron and the XLA packages "
                        "-> the TorchNeuron stack, stock pins raised to the transformers 5 floors; or, while this "
                        "file keeps optimum-neuron, keep them), or rename it to a requirements name in this include "
                        "and run neuron-migrate again")


#: an include line of a requirements file (``-r base.txt``, ``--constraint=pins.txt``)
_INCLUDE = re.compile(r"^[ \t]*(--requirement|--constraint|-r|-c)(?:[ \t]*=[ \t]*|[ \t]+|(?=[^\s=-]))([^\s#]+)")
