"""NM140: a Neuron diffusion pipeline becomes the diffusers pipeline on the device, its repeated blocks compiled."""

from tests.rules.case import findings, migrate, unchanged

#: an export job of the project that saves a folder the loads below read, its precision known only at run time (the
#: loads then get the compiled default dtype)
EXPORT_JOB = ("import sys\nfrom optimum.neuron import {cls}\n"
              'pipe = {cls}.from_pretrained(sys.argv[1], export=True, auto_cast_type=sys.argv[2])\n'
              "pipe.save_pretrained({folder})\n")


def test_sdxl_pipeline_becomes_the_diffusers_pipeline() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionXLPipeline

        pipe = NeuronStableDiffusionXLPipeline.from_pretrained("sdxl_neuron/")
        image = pipe(prompt="a lighthouse at dusk").images[0]
        """,
        "NM140", path="imagine.py",
        project={"compile_sdxl.py": EXPORT_JOB.format(cls="NeuronStableDiffusionXLPipeline", folder='"sdxl_neuron"')},
    )
    assert "from diffusers import StableDiffusionXLPipeline" in result.text
    assert 'StableDiffusionXLPipeline.from_pretrained("sdxl_neuron/"' in result.text
    assert "compile_repeated_blocks(backend=\"neuron\"" in result.text
    # a load without export=True names compiled artifacts: rewritten, but reported todo, never fixed
    assert (3, "todo") in findings(result, "NM140")
    assert (3, "fixed") not in findings(result, "NM140")
    assert any("not complete" in f.message and "load the source checkpoint id instead" in f.message
               for f in result.findings)


def test_stock_diffusers_pipeline_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from diffusers import StableDiffusionXLPipeline

        pipe = StableDiffusionXLPipeline.from_pretrained("stabilityai/stable-diffusion-xl-base-1.0")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM140",
    )


def test_a_reload_takes_the_precision_this_file_exports_in() -> None:
    source = """
        import os
        from optimum.neuron import NeuronStableDiffusionPipeline

        if os.path.isdir("sd_neuron"):
            pipe = NeuronStableDiffusionPipeline.from_pretrained("sd_neuron")
        else:
            pipe = NeuronStableDiffusionPipeline.from_pretrained(MODEL, export=True, auto_cast_type="bf16")
            pipe.save_pretrained("sd_neuron")
        """
    result = migrate(source, "NM140")
    assert 'StableDiffusionPipeline.from_pretrained("sd_neuron", dtype=torch.bfloat16)' in result.text


def test_a_reload_with_no_export_in_the_file_gets_the_compiled_default_dtype() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("sd_neuron")
        """,
        "NM140", path="imagine.py",
        project={"compile_sd.py": EXPORT_JOB.format(cls="NeuronStableDiffusionPipeline", folder='"sd_neuron"')},
    )
    # one explicit dtype for every component, whatever the folder holds (rt3B #2: unet fp32 beside a bf16 text encoder)
    assert 'StableDiffusionPipeline.from_pretrained("sd_neuron", dtype=torch.bfloat16).to(' in result.text
    # the export picks auto_cast_type when it runs (sys.argv[2]): the todo names that choice, not the default
    assert "dtype=torch.bfloat16 is fixed here, while the project's export compile_sd.py " \
        "(auto_cast_type=sys.argv[2]) chooses the precision" in result.text
    assert "ran in by default" not in result.text


def test_pipeline_shapes_from_a_project_module_are_folded() -> None:
    source = """
        from optimum.neuron import NeuronStableDiffusionPipeline

        from app.config import SD_SHAPES

        pipe = NeuronStableDiffusionPipeline.from_pretrained("stabilityai/stable-diffusion-2-1-base", export=True,
                                                             auto_cast_type="bf16", **SD_SHAPES)
        image = pipe("a cat", height=512, width=512).images[0]
        """
    config = 'SD_SHAPES = dict(batch_size=1, height=512, width=512, num_images_per_prompt=1)\n'
    result = migrate(source, "NM140", path="app/imagine.py", project={"app/config.py": config})
    assert "**SD_SHAPES" not in result.text and "dtype=torch.bfloat16" in result.text
    assert any("batch_size=1, height=512, width=512" in f.message for f in result.findings if f.rule == "NM140")


def test_pipeline_load_with_an_unknown_splat_stays_on_optimum_neuron() -> None:
    source = """
        from optimum.neuron import NeuronStableDiffusionPipeline

        from app.config import SD_SHAPES

        pipe = NeuronStableDiffusionPipeline.from_pretrained("sd", export=True, **SD_SHAPES)
        """
    config = 'SD_SHAPES = dict(batch_size=1, height=512, width=512)\nSD_SHAPES["height"] = 768\n'
    result = migrate(source, "NM140", path="app/imagine.py", project={"app/config.py": config})
    assert "from optimum.neuron import NeuronStableDiffusionPipeline" in result.text
    assert 'NeuronStableDiffusionPipeline.from_pretrained("sd", export=True, **SD_SHAPES)' in result.text
    assert {f.severity.value for f in result.findings if f.rule == "NM140"} == {"todo"}


LOADER = """
    from optimum.neuron import NeuronStableDiffusionPipeline

    def load(path):
        return NeuronStableDiffusionPipeline.from_pretrained(path)
    """


def test_load_of_a_compiled_folder_gets_the_dtype_the_project_export_saves_in() -> None:
    export = ("from optimum.neuron import NeuronStableDiffusionPipeline as P\n"
              'p = P.from_pretrained("sd", export=True, auto_cast=None)\np.save_pretrained("out")\n')
    result = migrate(LOADER, "NM140", path="imagine.py", project={"compile_sd.py": export})
    assert "from_pretrained(path, dtype=torch.float32).to(" in result.text
    assert any("this project's export (compile_sd.py)" in f.message for f in result.findings if f.rule == "NM140")


def test_load_of_a_compiled_folder_gets_the_compiled_default_dtype() -> None:
    export = EXPORT_JOB.format(cls="NeuronStableDiffusionPipeline", folder="sys.argv[3]")
    result = migrate(LOADER, "NM140", path="imagine.py", project={"compile_sd.py": export})
    assert "from_pretrained(path, dtype=torch.bfloat16).to(" in result.text


def test_load_of_a_folder_no_export_of_the_project_writes_stays_on_optimum_neuron() -> None:
    # diffusers cannot load a folder of NEFFs: rewritten, the load raised at run time
    result = migrate(LOADER, "NM140", path="imagine.py")
    assert result.text.startswith("from optimum.neuron import NeuronStableDiffusionPipeline\n")
    assert "return NeuronStableDiffusionPipeline.from_pretrained(path)\n" in result.text
    assert {f.severity.value for f in result.findings if f.rule == "NM140"} == {"todo"}
    assert any("no Neuron diffusion export of this project" in f.message and "load the source checkpoint" in f.message
               for f in result.findings)


def test_load_of_a_folder_another_export_does_not_write_stays() -> None:
    export = EXPORT_JOB.format(cls="NeuronStableDiffusionPipeline", folder='"sd_neuron"')
    result = migrate("from optimum.neuron import NeuronStableDiffusionPipeline as P\n"
                     'pipe = P.from_pretrained("sd_neuron_v2")\n', "NM140", path="imagine.py",
                     project={"compile_sd.py": export})
    assert 'P.from_pretrained("sd_neuron_v2")\n' in result.text and "from diffusers" not in result.text
    assert any("writes `sd_neuron_v2` (they save to `sd_neuron`)" in f.message for f in result.findings)


def test_a_folder_an_optimum_cli_export_writes_names_its_source() -> None:
    script = "optimum-cli export neuron --model stabilityai/sd-turbo --task stable-diffusion sd_turbo_neuron/\n"
    result = migrate("from optimum.neuron import NeuronStableDiffusionPipeline\n"
                     'pipe = NeuronStableDiffusionPipeline.from_pretrained("sd_turbo_neuron")\n', "NM140",
                     path="imagine.py", project={"compile.sh": script})
    assert "from diffusers" not in result.text
    assert any('load "stabilityai/sd-turbo" here with export=True' in f.message for f in result.findings)


def test_a_kept_load_elsewhere_keeps_the_loads_of_the_folders_its_held_exports_write() -> None:
    # legacy.py's load stays, so NM140 keeps compile_sd.py's export on optimum-neuron (rt5H D1): it keeps
    # writing NEFFs, which a migrated load of its folder could not read
    project = {"compile_sd.py": EXPORT_JOB.format(cls="NeuronStableDiffusionPipeline", folder='"sd_neuron"'),
               "legacy.py": "from optimum.neuron import NeuronStableDiffusionPipeline\n"
                            'demo = NeuronStableDiffusionPipeline.from_pretrained("org/sd-neuron")\n'}
    result = migrate("from optimum.neuron import NeuronStableDiffusionPipeline\n"
                     'pipe = NeuronStableDiffusionPipeline.from_pretrained("sd_neuron")\n', "NM140",
                     path="imagine.py", project=project)
    assert "from diffusers" not in result.text
    assert any("held there by legacy.py" in f.message for f in result.findings)


def test_export_only_script_gets_no_device_move_and_no_compile() -> None:
    source = """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("sd", export=True, height=512, width=512)
        pipe.save_pretrained("compiled")
        """
    result = migrate(source, "NM140")
    assert 'pipe = StableDiffusionPipeline.from_pretrained("sd", dtype=torch.bfloat16)\n' in result.text
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any(".to(" in line or "compile_repeated_blocks" in line for line in code)


def test_pipeline_that_is_called_keeps_its_device_move_and_compile() -> None:
    source = """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("sd", export=True, height=512, width=512)
        pipe.save_pretrained("compiled")
        image = pipe("a cat", height=512, width=512).images[0]
        """
    result = migrate(source, "NM140")
    assert 'from_pretrained("sd", dtype=torch.bfloat16).to(' in result.text
    assert "pipe.unet.compile_repeated_blocks(" in result.text


def test_a_sized_call_of_a_pipeline_compiled_for_several_images_gets_a_todo() -> None:
    # optimum made 2 images per prompt at each call (compiled in); diffusers makes 1 unless told
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("org/sd", export=True, height=512, width=512,
                                                             num_images_per_prompt=2)
        images = pipe("a cat", height=512, width=512).images
        same = pipe("a dog", height=512, width=512, num_images_per_prompt=2).images
        """,
        "NM140", path="app.py",
    )
    messages = [(f.line, f.message) for f in result.findings if f.rule == "NM140"]
    assert any(line == 5 and "without num_images_per_prompt=" in message and "pass num_images_per_prompt=2" in message
               for line, message in messages), messages
    assert not any(line == 6 for line, _ in messages)


def test_a_load_takes_its_dtype_and_shapes_from_the_export_of_its_own_folder() -> None:
    project = {
        "export_a.py": EXPORT_JOB.replace("sys.argv[2]", '"bf16"').format(cls="NeuronStableDiffusionPipeline",
                                                                           folder='"sd_a"'),
        "export_b.py": EXPORT_JOB.format(cls="NeuronStableDiffusionPipeline", folder='"sd_b"'),
    }
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("sd_a")
        """,
        "NM140", path="serve_a.py", project=project,
    )
    messages = " ".join(f.message for f in result.findings if f.rule == "NM140")
    assert "this project's export (export_a.py)" in messages
    assert "export_b.py" not in messages


def _fixed_and_todos(result) -> tuple[str, list[str]]:
    fixed = " ".join(f.message for f in result.findings if f.severity.value == "fixed")
    return fixed, [f.message for f in result.findings if f.severity.value == "todo"]


def test_parallelism_arguments_are_todos_never_dropped_and_fixed() -> None:
    """data_parallel_mode ran two replicas, tensor_parallel_size sharded the denoiser: the migrated pipeline is one
    replica on one device, so each is its own todo (what to do), never in the fixed list of dropped arguments."""
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionPipeline, NeuronFluxPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("stabilityai/stable-diffusion-2-1-base", export=True,
                                                             height=512, width=512, data_parallel_mode="all",
                                                             optlevel="1")
        flux = NeuronFluxPipeline.from_pretrained("black-forest-labs/FLUX.1-dev", export=True, height=1024,
                                                  width=1024, tensor_parallel_size=8)
        """,
        "NM140", path="serve.py",
    )
    fixed, notes = _fixed_and_todos(result)
    assert "data_parallel_mode" not in fixed and "tensor_parallel_size" not in fixed
    assert "dropped export/compiler-only arguments: export, optlevel" in fixed
    data = [n for n in notes if n.startswith('data_parallel_mode="all"')]
    assert len(data) == 1 and "one replica on one device" in data[0] and "one process per core" in data[0]
    tensor = [n for n in notes if n.startswith("tensor_parallel_size=8")]
    assert len(tensor) == 1 and "one replica on one device" in tensor[0]
    assert "TensorParallelConfig(tp_degree=8)" in tensor[0] and "torchrun --nproc_per_node 8" in tensor[0]
    code = "".join(line for line in result.text.splitlines() if "# neuron-migrate:" not in line)
    assert "data_parallel_mode" not in code and "tensor_parallel_size" not in code


def test_one_core_parallelism_values_are_dropped_as_done() -> None:
    """tensor_parallel_size=1 / data_parallel_mode="none" ran on one core, as the diffusers pipeline does."""
    result = migrate(
        """
        from optimum.neuron import NeuronStableDiffusionPipeline

        pipe = NeuronStableDiffusionPipeline.from_pretrained("stabilityai/stable-diffusion-2-1-base", export=True,
                                                             height=512, width=512, data_parallel_mode="none",
                                                             tensor_parallel_size=1)
        """,
        "NM140", path="serve.py",
    )
    fixed, notes = _fixed_and_todos(result)
    assert "dropped export/compiler-only arguments: export, data_parallel_mode, tensor_parallel_size" in fixed
    assert not any("parallel" in n for n in notes)


def test_an_export_with_an_unread_splat_is_still_an_export_and_its_reload_elsewhere_says_so() -> None:
    """rt7N N6 across files: export=True beside **cfg["input_shapes"] is an export (the splat cannot carry export=
    too), held as it is; the load of its folder in another file names it and says they migrate together, where it
    said no export of the project writes the folder (while the export's todo said to port that load first)."""
    from codemods.inference._compiled_exports import compiled_folder_uses

    export = ("import json\nfrom optimum.neuron import NeuronStableDiffusionXLPipeline\n"
              "cfg = json.load(open('c.json'))\n"
              "pipe = NeuronStableDiffusionXLPipeline.from_pretrained(cfg['model_id'], export=True, "
              "**cfg['input_shapes'])\npipe.save_pretrained(cfg['compiled_dir'])\n")
    uses = compiled_folder_uses(export)
    assert uses is not None and uses["loads"] == ()
    assert uses["saves"] == (("NeuronStableDiffusionXLPipeline", None, True),)
    assert uses["expressions"] == (("cfg['compiled_dir']", "NeuronStableDiffusionXLPipeline"),)
    result = migrate(
        """
        import json
        from optimum.neuron import NeuronStableDiffusionXLPipeline

        cfg = json.load(open("c.json"))
        pipe = NeuronStableDiffusionXLPipeline.from_pretrained(cfg["compiled_dir"])
        """,
        "NM140", path="generate.py", project={"export_lora.py": export},
    )
    notes = " ".join(f.message for f in result.findings if f.severity.value == "todo")
    assert "from optimum.neuron import NeuronStableDiffusionXLPipeline" in result.text
    assert "(export_lora.py) stays on optimum-neuron" in notes and "migrated together" in notes
    assert "no Neuron diffusion export of this project" not in notes
