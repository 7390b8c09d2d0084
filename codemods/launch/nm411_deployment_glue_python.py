"""NM411 neuron-deployment-glue-python: report XLA-era Neuron deployment settings in Python (SageMaker); drop dead job env keys.

What it does:

* A ``todo`` on SageMaker ``HuggingFaceModel`` / ``HuggingFace`` / ``PyTorch`` definitions that point at Neuron
  DLC images (``image_uri="...pytorch-inference-neuronx..."``, also as an f-string,
  ``get_huggingface_llm_image_uri("huggingface-neuronx")``), TGI-neuronx settings (``HF_NUM_CORES``,
  ``HF_AUTO_CAST_TYPE``), Inf1/Inf2/Trn1 instance types (``instance_type="ml.inf2.xlarge"``; a list of them gets one
  note naming them all), ``transformers_version``/``pytorch_version``/``framework_version`` kwargs older than
  transformers 5 / torch 2.13 (they select an XLA-era container), and ``environment=``/``env=`` dictionaries
  whose keys the shared env-var table removes or reviews (they carry ``XLA_*``/``NEURON_*`` settings into a
  SageMaker job).
* vLLM's earlier built-in Neuron platform chosen from Python (``LLM(model=..., device="neuron", ...)``, also
  ``EngineArgs`` / ``AsyncEngineArgs``, in a file importing vllm) gets the todo NM409 gives ``vllm serve --device
  neuron``: install the vLLM-Neuron plugin and check ``device=`` and the Neuron-only arguments against its
  quickstart. The call is left as it is (``tensor_parallel_size`` and the sizes stay).
* ``"RUN_NEURON_PARALLEL_COMPILE": "1"`` in a job environment marks a compile-only job: its todo says to delete
  the estimator and its ``.fit()``.
* Serving advice (the vLLM-Neuron plugin) is given only inside serving calls (``HuggingFaceModel``, ``deploy``) or
  for serving images; training estimators (``HuggingFace``, ``PyTorch``, ``fit``) and training images are told
  about Trn2/Trn3 training in a TorchNeuron container.
* A note sits above the statement; when its key or value is further down a multi-line call, the note starts with
  ``line N of the statement below:`` and names the key. One note per statement and message.
* The one rewrite: in the ``environment=`` dict of a training job (``HuggingFace``/``PyTorch``/``Estimator`` with
  an ``entry_point``) whose script is a file of the project that the rules port (not left on torch_xla), a key the
  env-var table plainly removes (``NEURON_FUSE_SOFTMAX``, ``PJRT_DEVICE``, ``XLA_FLAGS`` ...) is deleted, as the
  shell (NM404) and ``os.environ`` (NM316) rules delete the variable: nothing TorchNeuron runs reads it. The dict
  may be written in the call or bound to the name it passes, in this file or an earlier notebook cell (the last
  binding before the call, ``codemods/_lib/kernel_values.py``), also inside the job keywords kept in a
  ``common = dict(entry_point="train.py", environment=env, ...)`` call that the estimators take as ``**common``
  (a training job when every call taking it is one; one a serving call takes too, or none, gets notes only).
  A ``NEURON_CC_FLAGS`` value gets NM405's note naming the options to drop. A key the job's code reads (the entry point's
  folder, what SageMaker uploads, or the notebook that writes it; the whole project with ``dependencies=``) stays
  with a todo naming the readers. Precision and review variables (``XLA_DOWNCAST_BF16``, ``NEURON_CC_FLAGS``),
  renames, serving calls and jobs whose script is not known keep their todos: "remove this key" where the table
  would delete a variable, "rename X to Y" where it renames one. ``os.environ[...]`` assignments belong to the
  torch_xla rules (NM3xx). The launch-file side is NM409.

Why:

The image, instance and serving stack are deployment decisions: TorchNeuron runs on Trn2/Trn3, trains in a
TorchNeuron container and serves through the vLLM-Neuron plugin or a TorchNeuron container, which no XLA-era
image or setting maps to mechanically. A ``RUN_NEURON_PARALLEL_COMPILE`` job only extracted and compiled graphs
for the real job (placeholder losses); TorchNeuron compiles on first call, so such a job would become a second
full training run.

Before::

    model = HuggingFaceModel(image_uri=image, env={"HF_NUM_CORES": "2"}, role=role)
    job = PyTorch(entry_point="train.py", source_dir="code", environment={"NEURON_FUSE_SOFTMAX": "1", "FI_EFA_FORK_SAFE": "1"})

After::

    # neuron-migrate: deployment glue: TGI-neuronx compile settings (HF_NUM_CORES); ...
    model = HuggingFaceModel(image_uri=image, env={"HF_NUM_CORES": "2"}, role=role)
    job = PyTorch(entry_point="train.py", source_dir="code", environment={"FI_EFA_FORK_SAFE": "1"})

Safety: needs-review. Each image, instance and version gets a todo (the user picks them); job environment keys
go only where the env-var table removes the variable outright and no code of the job reads it.

References:

* https://sagemaker.readthedocs.io/en/stable/frameworks/huggingface/sagemaker.huggingface.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
"""

from __future__ import annotations

import posixpath
import re
from typing import Callable, cast

import libcst as cst

from codemods._lib.cst import string_value
from codemods._lib.kernel_values import keyword_sites
from codemods._lib.launch_targets import env_readers, resolve_script, stays_on_xla
from codemods._tables import env_vars
from codemods.launch._base import ENV_FACTS, READ_BY_PROJECT_TODO, deployment_hits, stochastic_rounding_message
from codemods.launch.nm405_review_neuron_env import cc_flags_message
from codemods.launch.nm409_deployment_glue import VLLM_PYTHON_TODO, deploy_todo, hit_kind
from migrate import positions
from migrate.rule import PythonRule, Safety

#: SageMaker calls that serve a model, and those that run a training job: the advice differs.
_SERVING_CALLS = frozenset({
    "HuggingFaceModel", "PyTorchModel", "Model", "ModelBuilder", "deploy", "get_huggingface_llm_image_uri",
    "HuggingFacePredictor", "Predictor",
})
_TRAINING_CALLS = frozenset({"HuggingFace", "PyTorch", "Estimator", "fit"})
_VERSION_KWARGS = ("transformers_version", "pytorch_version", "framework_version")
_ENV_KWARGS = frozenset({"environment", "env"})
_COMPILE_ONLY_VALUES = frozenset({"1", "true", "True", "yes"})
_REMOVED_WORDING = [  # the env table words its messages for a rule that deletes the variable; this one does not
    (re.compile(r"\s*\(removed\)"), "; remove this key"),
    (re.compile(r"; removed:"), "; remove this key:"),
    (re.compile(r"^(\w+) -> (\w+)"), r"rename \1 to \2"),
]

RUN_COMPILE_ONLY_TODO = (
    'job environment: "RUN_NEURON_PARALLEL_COMPILE" set to {value} made this job a neuron_parallel_compile '
    "graph-extraction pass (placeholder losses, no trained model) that filled the compile cache for the real job; "
    "TorchNeuron has no such pass and compiles on first call, so this job would now train in full beside the real "
    "one: delete this estimator and its .fit() call"
)
VERSION_TODO = (
    "{keyword}={value!r} selects an XLA-era (torch_xla) Neuron deep-learning container; TorchNeuron needs torch "
    "2.13/2.14 and the project now needs transformers>=5: set image_uri to a TorchNeuron image and make these "
    "versions match it, or drop them"
)


#: vLLM's engine entry points: given ``device="neuron"`` they picked vLLM's earlier built-in Neuron platform
_VLLM_CALLS = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs"})


def _from_vllm(node: cst.Call, callee: str, code: str) -> bool:
    """Whether the call's function is vLLM's: ``vllm.LLM(...)`` (``import vllm``), or ``LLM(...)`` with ``LLM``
    imported from vllm (``from vllm import LLM, SamplingParams``; a class of the same name from elsewhere is not)."""
    func = node.func
    if isinstance(func, cst.Attribute):
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value == "vllm" \
            and re.search(r"^[ \t]*import[ \t]+vllm\b", code, re.MULTILINE) is not None
    imported = rf"^[ \t]*from[ \t]+vllm[\w.]*[ \t]+import[ \t]+(?:\([^)]*|[^\n]*)\b{re.escape(callee)}\b(?![ \t]+as\b)"
    return re.search(imported, code, re.MULTILINE) is not None


def _callee(node: cst.Call) -> str | None:
    func = node.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _sagemaker_call(node: cst.Call) -> bool:
    return _callee(node) in _SERVING_CALLS or _callee(node) in _TRAINING_CALLS


def _job_keywords(node: cst.Call) -> bool:
    """A ``dict(...)`` call with a literal ``entry_point=``: the keywords of a SageMaker job, passed as ``**name``
    (``common = dict(entry_point="train.py", environment=env, ...)`` then ``HuggingFace(..., **common)``)."""
    return isinstance(node.func, cst.Name) and node.func.value == "dict" and any(
        arg.keyword is not None and arg.keyword.value == "entry_point" and string_value(arg.value) is not None
        for arg in node.args)


def _env_call(node: cst.Call) -> bool:
    return _sagemaker_call(node) or _job_keywords(node)


def _splatted_into(code: str, name: str) -> set[str]:
    """The SageMaker calls of ``code`` that take ``**name``."""
    calls = "|".join(sorted(_SERVING_CALLS | _TRAINING_CALLS))
    pattern = re.compile(rf"\b({calls})\s*\((?:[^()]|\([^()]*\))*?\*\*{re.escape(name)}\b")
    return set(pattern.findall(code))


def _entry_point(node: cst.Call) -> str | None:
    """The script a SageMaker job runs (``source_dir``/``entry_point``, literals), or None."""
    keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    entry = string_value(keywords.get("entry_point"))
    if entry is None:
        return None
    source_dir = string_value(keywords.get("source_dir"))
    return posixpath.join(source_dir, entry) if source_dir else entry


def _text_of(node: cst.FormattedString) -> str:
    """The literal text of an f-string, each ``{...}`` as ``{}``."""
    return "".join(part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts)


def _literal_text(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        return _text_of(node)
    return None


def _as_step(message: str) -> str:
    for pattern, replacement in _REMOVED_WORDING:
        message = pattern.sub(replacement, message)
    return message


def _old_version(keyword: str, value: str) -> bool:
    """Whether a SageMaker version kwarg names a release older than what TorchNeuron and transformers 5 need."""
    match = re.match(r"(\d+)\.(\d+)", value)
    if match is None:
        return False
    major, minor = int(match.group(1)), int(match.group(2))
    if keyword == "transformers_version":
        return major < 5
    return (major, minor) < (2, 13)  # pytorch_version / framework_version: torch 2.13 is TorchNeuron's first


def _assignments(module: cst.Module) -> list[cst.Assign]:
    """The ``name = value`` statements of the module (any depth), one plain name target each."""
    found: list[cst.Assign] = []

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                found.append(node)

    module.visit(Visitor())
    return found


class NeuronDeploymentGluePython(PythonRule):
    """Report Neuron DLC / TGI-neuronx images, instance types, versions and env dicts in SageMaker-style Python code."""

    id = "NM411"
    name = "neuron-deployment-glue-python"
    safety = Safety.NEEDS_REVIEW
    facts = ENV_FACTS
    triggers = ("-neuronx", "neuronx-tgi", "HF_NUM_CORES", "HF_AUTO_CAST_TYPE", "ml.inf", "ml.trn1", "--entrypoint",
                "RUN_NEURON_PARALLEL_COMPILE", "import vllm", "from vllm")  # the import forms _from_vllm reads

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.calls: list[str | None] = []  # callee names of the calls being visited, innermost last
        self.neuron_calls: list[bool] = []  # for each of them: a SageMaker call given a Neuron image / instance
        self.neuron_names: set[str] = set()  # module-level names bound to a Neuron image / instance type
        self.grouped: set[int] = set()  # strings already reported as part of a list of values
        self.noted: set[tuple[int, str]] = set()  # (statement, message): one note per statement and value set
        #: id(env dict) -> for the dict of a training job whose keys the table plainly removes can go (see
        #: ``job_environments``): the code of that job that reads a variable; None: notes only
        self.env_dicts: dict[int, Callable[[str], list[str]] | None] = {}
        self.removed: set[int] = set()  # ids of the env dict members removed
        self.dropped: list[tuple[int, int, int]] = []  # (statement, line in it, lines) of each member removed

    # ------------------------------------------------------------------ where a note is and what it says

    def note(self, node: cst.CSTNode, message: str) -> None:
        """A todo naming the line of ``node`` inside its statement when the note (above it) is further away."""
        statement = self.ctx.statement_stack[-1] if self.ctx.statement_stack else None
        key = (id(statement), message)
        if key in self.noted:
            return
        self.noted.add(key)
        line = self.line_in_statement(statement, node)
        line -= sum(lines for where, first, lines in self.dropped if where == id(statement) and first < line)
        self.todo(node, message if line <= 1 else f"line {line} of the statement below: {message}")

    @staticmethod
    def line_in_statement(statement: cst.CSTNode | None, node: cst.CSTNode) -> int:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return 1
        found = positions.starts(cst.Module(body=[statement]), [statement, node])
        if id(statement) not in found or id(node) not in found:
            return 1
        return found[id(node)][0] - found[id(statement)][0] + 1

    def kind(self, hits: list[str]) -> str | None:
        """"serving", "training" or None for values found inside the calls being visited."""
        for hit in hits:
            kind = hit_kind(hit)
            if kind is not None:
                return kind
        for callee in reversed(self.calls):
            if callee in _SERVING_CALLS:
                return "serving"
            if callee in _TRAINING_CALLS:
                return "training"
        return None

    def report_hits(self, node: cst.CSTNode, found: list[tuple[str, str]]) -> None:
        by_what: dict[str, list[str]] = {}
        for what, hit in found:
            by_what.setdefault(what, [])
            if hit not in by_what[what]:
                by_what[what].append(hit)
        for what, hits in by_what.items():
            self.note(node, deploy_todo(what, ", ".join(hits), self.kind(hits)))

    # ------------------------------------------------------------------ visits

    def visit_Module(self, node: cst.Module) -> None:
        for statement in node.body:  # module-level ``image = "...neuronx..."``: a call passing ``image`` is Neuron's
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    text = _literal_text(small.value)
                    if text is not None and deployment_hits(text):
                        self.neuron_names.add(small.targets[0].target.value)

        self.job_environments(node)

    def job_environments(self, module: cst.Module) -> None:
        """The ``environment=`` / ``env=`` dicts of SageMaker calls, written in the call or bound to the name it
        passes (here or in an earlier notebook cell: ``codemods/_lib/kernel_values.py``). Their keys that the env-var
        table plainly removes go when the call is a training job whose entry point is a script of the project that
        the rules port (not left on torch_xla): nothing else in that job reads them (keys the project's code reads
        stay with a todo)."""
        project = self.ctx.options.project
        bound = {id(small.value): cast(cst.Name, small.targets[0].target).value for small in _assignments(module)}
        code = self.ctx.namespace.trigger_text if self.ctx.namespace is not None else self.ctx.source
        for keyword in sorted(_ENV_KWARGS):
            for site in keyword_sites(self.ctx, module, keyword, _env_call):
                if not isinstance(site.value, cst.Dict) or not site.value_here:
                    continue
                callee = _callee(site.call)
                if _job_keywords(site.call):
                    # the keywords of the calls that take them as **name: a training job when only training calls do
                    callers = _splatted_into(code, bound[id(site.call)]) if id(site.call) in bound else set()
                    # not known to be only a training job's (a serving call takes them too, or none): notes only
                    callee = min(callers) if callers and callers <= _TRAINING_CALLS else "dict"
                entry = _entry_point(site.call)
                resolved = resolve_script(project, self.ctx.path, entry) if entry is not None else None
                if resolved is None or callee not in _TRAINING_CALLS or resolved.path is None \
                        or stays_on_xla(project, resolved.path):
                    self.env_dicts[id(site.value)] = None  # a dict any such call gets keeps its keys
                    continue
                # the job runs the entry point's folder (what SageMaker uploads; ``dependencies=`` adds others); a
                # notebook may write its scripts itself (%%writefile): a read in the notebook counts
                launcher = re.sub(r"\.cell\d+\.py$", ".ipynb", self.ctx.path.as_posix())
                folders = [posixpath.dirname(resolved.path), launcher]
                if any(arg.keyword is not None and arg.keyword.value == "dependencies" for arg in site.call.args):
                    folders = [""]
                self.env_dicts.setdefault(id(site.value), env_readers(project, folders))

    def neuron_value(self, value: cst.BaseExpression) -> bool:
        """Whether an argument is, or names, a Neuron image / instance type (a name bound here or in another cell)."""
        text = _literal_text(value)
        if text is not None:
            return bool(deployment_hits(text))
        if not isinstance(value, cst.Name):
            return False
        if value.value in self.neuron_names:
            return True
        if self.ctx.namespace is None:
            return False
        binding = re.search(rf"^[ \t]*{re.escape(value.value)}[ \t]*=[ \t]*[rf]?[\"']([^\"'\n]*)",
                            self.ctx.namespace.trigger_text, re.MULTILINE)
        return binding is not None and bool(deployment_hits(binding.group(1)))

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee(node)
        if callee in _VLLM_CALLS:
            self.vllm_on_neuron(node, callee)
        self.calls.append(callee)
        self.neuron_calls.append((callee in _SERVING_CALLS or callee in _TRAINING_CALLS)
                                 and any(self.neuron_value(arg.value) for arg in node.args))

    def vllm_on_neuron(self, node: cst.Call, callee: str) -> None:
        """``LLM(model=..., device="neuron", ...)`` (vLLM's ``LLM`` / ``EngineArgs``, imported from vllm): vLLM's
        earlier built-in Neuron platform chosen from Python gets NM409's todo for ``vllm serve --device neuron``; the
        call stays as it is (its tensor_parallel_size and sizes carry over to the vLLM-Neuron plugin)."""
        code = self.ctx.namespace.trigger_text if self.ctx.namespace is not None else self.ctx.source
        if not _from_vllm(node, callee, code):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device" and _literal_text(arg.value) == "neuron":
                hit = f"{callee}(..., device={cst.Module([]).code_for_node(arg.value)})"
                self.note(arg, VLLM_PYTHON_TODO.format(hit=hit, call=f"{callee}(...)"))
                return

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.calls:
            self.calls.pop()
            self.neuron_calls.pop()
        return updated

    def visit_List(self, node: cst.List) -> None:
        self.report_values(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self.report_values(node)

    def visit_Set(self, node: cst.Set) -> None:
        self.report_values(node)

    def report_values(self, node: cst.List | cst.Tuple | cst.Set) -> None:
        """A list of instance types (or images) gets one note naming them all."""
        found = []
        for element in node.elements:
            value = element.value
            if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
                hits = deployment_hits(value.evaluated_value)
                if hits:
                    found.extend(hits)
                    self.grouped.add(id(value))
        if found:
            self.report_hits(node, found)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if id(node) in self.grouped or not isinstance(value, str):
            return
        self.report_hits(node, deployment_hits(value))

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.report_hits(node, deployment_hits(_text_of(node)))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _VERSION_KWARGS and self.neuron_calls \
                and self.neuron_calls[-1]:  # the versions of a call that runs on a Neuron image / instance
            value = _literal_text(node.value)
            if value is not None and _old_version(node.keyword.value, value):
                self.note(node, VERSION_TODO.format(keyword=node.keyword.value, value=value))
        if node.keyword is not None and node.keyword.value in _ENV_KWARGS and isinstance(node.value, cst.Dict):
            self.env_dicts.setdefault(id(node.value), None)  # any call's env dict gets notes; see visit_Dict

    def visit_Dict(self, node: cst.Dict) -> None:
        if id(node) not in self.env_dicts:
            return
        job_readers = self.env_dicts[id(node)]
        keys = [(element, element.key.evaluated_value) for element in node.elements
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                and isinstance(element.key.evaluated_value, str)]
        notes: list[tuple[cst.CSTNode, str]] = []
        for element, name in keys:
            if name == "RUN_NEURON_PARALLEL_COMPILE":
                run_value = element.value.evaluated_value if isinstance(element.value, cst.SimpleString) else None
                if run_value in _COMPILE_ONLY_VALUES:
                    notes.append((element.key, RUN_COMPILE_ONLY_TODO.format(value=repr(run_value))))
                else:
                    notes.append((element.key, 'job environment: "RUN_NEURON_PARALLEL_COMPILE" selected the '
                                  "neuron_parallel_compile pass, which TorchNeuron does not have: remove this key"))
                continue
            action = env_vars.lookup(name)
            if action is None or action.action == "keep":
                continue
            message = stochastic_rounding_message(self.ctx.options.project, env_vars.message_for(name, action),
                                                  self.ctx.source)
            if name == "NEURON_CC_FLAGS" and isinstance(element.value, cst.SimpleString) \
                    and isinstance(element.value.evaluated_value, str) \
                    and env_vars.cc_flag_actions(element.value.evaluated_value):
                message = cc_flags_message(element.value.evaluated_value)  # the shell's note (NM405): what to drop
            plain = action.action == "remove" and not action.todo
            readers = job_readers(name) if plain and job_readers is not None else []
            if job_readers is not None and plain and not readers:
                self.removed.add(id(element))
                self.fixed(element.key, f"job environment: {message}" if name in message
                           else f'job environment: "{name}": {message}')
                continue
            if readers:
                shown = ", ".join(readers[:3]) + (f" and {len(readers) - 3} more" if len(readers) > 3 else "")
                message = READ_BY_PROJECT_TODO.format(name=name, readers=shown, s="s" if len(readers) == 1 else "")
                message = message.replace("this setting", "this key")
            else:
                message = _as_step(message)
            notes.append((element.key, f"job environment: {message}" if name in message
                          else f'job environment: "{name}": {message}'))
        statement = self.ctx.statement_stack[-1] if self.ctx.statement_stack else None
        for member in node.elements:  # the lines the removed members take: the notes count the lines left
            if id(member) in self.removed:
                line = self.line_in_statement(statement, member)
                self.dropped.append((id(statement), line, cst.Module([]).code_for_node(member).count("\n")))
        for key, message in notes:
            self.note(key, message)

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.BaseExpression:
        if not any(id(element) in self.removed for element in original.elements):
            return updated
        kept = [new for new, old in zip(updated.elements, original.elements) if id(old) not in self.removed]
        if kept:  # the last member keeps the dict's own ending (a trailing comma, or none)
            kept[-1] = kept[-1].with_changes(comma=updated.elements[-1].comma)
        return updated.with_changes(elements=kept)
