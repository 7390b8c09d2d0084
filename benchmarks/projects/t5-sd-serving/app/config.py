T5_MODEL = "google/flan-t5-base"
SD_MODEL = "stabilityai/stable-diffusion-2-1-base"

# static shapes the Neuron graphs are compiled for
T5_INPUT_SHAPES = {"batch_size": 1, "sequence_length": 128, "num_beams": 4}
T5_COMPILER_ARGS = {"auto_cast": "matmul", "auto_cast_type": "bf16"}

SD_SHAPES = dict(batch_size=1, height=512, width=512, num_images_per_prompt=1)
