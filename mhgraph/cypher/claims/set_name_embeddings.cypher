// Name embeddings kept on Topic / Target nodes, so that a later merge embeds only new names.
// $rows: [{node: element id, embedding}].
UNWIND $rows AS row
MATCH (n) WHERE elementId(n) = row.node
SET n.name_embedding = row.embedding
