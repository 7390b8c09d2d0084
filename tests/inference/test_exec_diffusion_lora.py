"""Execution proof for NM140's LoRA rewrite (rt7N N3): a diffusion export with ``lora_*`` arguments had optimum-neuron
fuse the adapters into the weights it compiled (optimum 0.4.5 ``exporters/neuron/utils.py``
``_load_lora_weights_to_pipeline``). The migrated pipeline must carry the same fused adapters: it is run on CPU with
a tiny Stable Diffusion pipeline and tiny non-zero LoRAs, and its images are compared with the pipeline built the
way optimum built it (load_lora_weights, set_adapters, fuse_lora) and with the pipeline without the LoRA."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.inference import tiny
from tests.inference.test_exec_inference import migrate, run

pytestmark = pytest.mark.execution

SINGLE = '''
import numpy as np
import torch
from optimum.neuron import NeuronStableDiffusionPipeline

pipe = NeuronStableDiffusionPipeline.from_pretrained({model!r}, export=True, batch_size=1, height=16, width=16,
                                                     auto_cast=None, lora_model_ids={lora1!r},
                                                     lora_weight_names="pytorch_lora_weights.safetensors",
                                                     lora_adapter_names="style", lora_scales=0.7)
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
np.save("migrated.npy", image)
'''

SEVERAL = '''
import numpy as np
import torch
from optimum.neuron import NeuronStableDiffusionPipeline

pipe = NeuronStableDiffusionPipeline.from_pretrained(
    {model!r}, export=True, batch_size=1, height=16, width=16, auto_cast=None,
    lora_model_ids=[{lora1!r}, {lora2!r}],
    lora_weight_names=["pytorch_lora_weights.safetensors", "pytorch_lora_weights.safetensors"],
    lora_adapter_names=["a", "b"], lora_scales=[0.7, 0.4])
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
np.save("migrated.npy", image)
'''


def _lora(model: Path, folder: Path, seed: int) -> Path:
    """A tiny non-zero LoRA (to_q/to_k/to_v/to_out.0 of the unet), saved in diffusers' format."""
    import torch
    from diffusers import StableDiffusionPipeline, UNet2DConditionModel
    from diffusers.utils import convert_state_dict_to_diffusers
    from peft import LoraConfig
    from peft.utils import get_peft_model_state_dict

    torch.manual_seed(seed)
    unet = UNet2DConditionModel.from_pretrained(model, subfolder="unet")
    unet.add_adapter(LoraConfig(r=2, lora_alpha=2, init_lora_weights=False,
                                target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    state = {key: value * 5 for key, value in convert_state_dict_to_diffusers(get_peft_model_state_dict(unet)).items()}
    StableDiffusionPipeline.save_lora_weights(str(folder), unet_lora_layers=state)
    return folder


def _images(model: Path, loras: list[tuple[Path, str]], scales: list[float] | None, single: bool) -> np.ndarray:
    """The pipeline as optimum-neuron built it before compiling (no unload: the adapters stay attached)."""
    import torch
    from diffusers import StableDiffusionPipeline

    pipe = StableDiffusionPipeline.from_pretrained(model, dtype=torch.float32)
    if single and loras:
        pipe.load_lora_weights(str(loras[0][0]), weight_name="pytorch_lora_weights.safetensors")
        pipe.fuse_lora(lora_scale=scales[0] if scales else 1.0)
    elif loras:
        for folder, name in loras:
            pipe.load_lora_weights(str(folder), weight_name="pytorch_lora_weights.safetensors", adapter_name=name)
        if scales:
            pipe.set_adapters([name for _, name in loras], adapter_weights=scales)
        pipe.fuse_lora()
    return pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
                generator=torch.Generator("cpu").manual_seed(0)).images


@pytest.mark.parametrize("single", [True, False], ids=["one-adapter", "several-adapters"])
def test_migrated_pipeline_carries_the_fused_lora(tmp_path: Path, single: bool) -> None:
    model = tiny.stable_diffusion(tmp_path / "sd")
    lora1, lora2 = _lora(model, tmp_path / "lora1", 1), _lora(model, tmp_path / "lora2", 2)
    script = (SINGLE if single else SEVERAL).format(model=str(model), lora1=str(lora1), lora2=str(lora2))
    migrated = migrate(script)
    assert "lora_" not in migrated.split("load_lora_weights")[0].split("from_pretrained")[-1]
    fused = migrated.index("fuse_lora(")
    assert migrated.index("load_lora_weights(") < fused < migrated.index("compile_repeated_blocks")
    run(migrated, tmp_path)
    image = np.load(tmp_path / "migrated.npy")
    if single:
        reference = _images(model, [(lora1, "style")], [0.7], single=True)
    else:
        reference = _images(model, [(lora1, "a"), (lora2, "b")], [0.7, 0.4], single=False)
    plain = _images(model, [], None, single=True)
    assert np.abs(reference - plain).max() > 1e-2  # the LoRA changes the images
    np.testing.assert_allclose(image, reference, atol=1e-5)


def test_saved_export_holds_the_fused_lora(tmp_path: Path) -> None:
    """An export job that only saves: the folder it writes holds the fused weights, as optimum's compiled one did."""
    import torch
    from diffusers import StableDiffusionPipeline

    model = tiny.stable_diffusion(tmp_path / "sd")
    lora1 = _lora(model, tmp_path / "lora1", 1)
    script = SINGLE.format(model=str(model), lora1=str(lora1)).split("image = ")[0] + 'pipe.save_pretrained("out")\n'
    migrated = migrate(script)
    run(migrated, tmp_path)
    pipe = StableDiffusionPipeline.from_pretrained(tmp_path / "out", dtype=torch.float32)
    image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
                 generator=torch.Generator("cpu").manual_seed(0)).images
    np.testing.assert_allclose(image, _images(model, [(lora1, "style")], [0.7], single=True), atol=1e-5)
