// The corpus names in the graph, and whether it holds Documents stored before corpora had names.
RETURN COLLECT { MATCH (k:Corpus) RETURN k.name ORDER BY k.name } AS names,
       EXISTS { MATCH (d:Document) WHERE d.corpus IS NULL } AS unnamed
