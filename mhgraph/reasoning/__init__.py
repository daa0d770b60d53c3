"""The reasoning steps of the multi-step methods: IR-CoT's next thought and query decomposition's
sub-questions, each with a language model (through mhgraph.llm) and a documented offline strategy
that reports label as such."""
