from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

REPO = "/opt/hydra_ft"
TORCHRUN = "torchrun --nproc_per_node=32 -m src.train"

with DAG("llama_finetune_trn1", start_date=datetime(2024, 5, 1), schedule=None, catchup=False) as dag:
    precompile = BashOperator(
        task_id="precompile",
        bash_command=f"cd {REPO} && neuron_parallel_compile {TORCHRUN} trainer.max_steps=10",
        env={"NEURON_CC_FLAGS": "--model-type transformer", "XLA_USE_BF16": "1"},
    )
    train = BashOperator(
        task_id="train",
        bash_command=f"cd {REPO} && {TORCHRUN}",
        env={"NEURON_CC_FLAGS": "--model-type transformer", "XLA_USE_BF16": "1"},
    )
    precompile >> train
