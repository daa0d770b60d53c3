"""Methods composed as stages of one pipeline (`--method compose`): filter -> candidates ->
expansion -> fusion -> rerank. stages.py reads and validates a pipeline, fusion.py fuses rankings,
diagnostics.py records what each stage kept, so a report shows where gold evidence is lost."""
