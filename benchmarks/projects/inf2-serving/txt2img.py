import sys
import os

from optimum.neuron import NeuronStableDiffusionPipeline

MODEL_ID = "stabilityai/stable-diffusion-2-1-base"
COMPILED = "sd21_neuron"

if os.path.isdir(COMPILED):
    pipe = NeuronStableDiffusionPipeline.from_pretrained(COMPILED)
else:
    pipe = NeuronStableDiffusionPipeline.from_pretrained(
        MODEL_ID,
        export=True,
        batch_size=1,
        height=512,
        width=512,
        num_images_per_prompt=1,
        auto_cast="matmul",
        auto_cast_type="bf16",
    )
    pipe.save_pretrained(COMPILED)

prompt = sys.argv[1] if len(sys.argv) > 1 else "a photo of an astronaut riding a horse on mars"
image = pipe(prompt, num_inference_steps=25).images[0]
image.save("out.png")
