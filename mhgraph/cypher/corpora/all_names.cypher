// The names of every corpus in the graph.
MATCH (k:Corpus) RETURN collect(k.name) AS names
