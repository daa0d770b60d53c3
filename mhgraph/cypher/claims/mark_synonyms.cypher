// Corpus $corpus records how its synonym edges were drawn ($threshold, $neighbours) and how many
// there are ($edges): graph traversal (`ppr`) reads this to know they exist.
MATCH (c:Corpus {name: $corpus})
SET c.synonym_threshold = $threshold, c.synonym_neighbours = $neighbours, c.synonym_edges = $edges
