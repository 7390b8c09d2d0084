from optimum.neuron import NeuronStableDiffusionPipeline


def load(path):
    return NeuronStableDiffusionPipeline.from_pretrained(path)


def generate(pipe, prompt, steps=25, guidance=7.5):
    image = pipe(prompt, num_inference_steps=steps, guidance_scale=guidance).images[0]
    return image
