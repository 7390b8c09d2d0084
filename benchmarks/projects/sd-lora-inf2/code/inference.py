"""SageMaker inference handler for the compiled SDXL+LoRA pipeline."""
import base64
import io

from optimum.neuron import NeuronStableDiffusionXLPipeline


def model_fn(model_dir, context=None):
    return NeuronStableDiffusionXLPipeline.from_pretrained(model_dir)


def predict_fn(data, pipe):
    prompt = data.pop("inputs", data)
    steps = data.pop("num_inference_steps", 30)
    images = pipe(prompt, num_inference_steps=steps, **data).images
    encoded = []
    for img in images:
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        encoded.append(base64.b64encode(buf.getvalue()).decode())
    return {"generated_images": encoded}
