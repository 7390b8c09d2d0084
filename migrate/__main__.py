"""`python -m migrate` runs the neuron-migrate command."""

from migrate.cli import main

if __name__ == "__main__":
    main()
