"""A canonical snapshot of the lexical graph, to compare two graphs for equality."""

from __future__ import annotations

SNAPSHOT = """
CALL () {
  MATCH (d:Document) OPTIONAL MATCH (d)-[:PUBLISHED_BY]->(s:Source)
  WITH d, collect(s.name) AS sources ORDER BY d.id
  RETURN collect([d.id, d.corpus, d.title, d.url, d.author, d.category, toString(d.published_at),
                  d.ingest_fingerprint, sources]) AS documents
}
CALL () {
  MATCH (c:Chunk) OPTIONAL MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
  WITH c, collect(d.id) AS docs ORDER BY c.id
  RETURN collect([c.id, c.corpus, c.index, c.text, c.token_count, c.source, toString(c.published_at), docs,
                  size(c.embedding), [x IN c.embedding[0..4] | round(x, 5)]]) AS chunks
}
CALL () {
  MATCH (a:Chunk)-[:NEXT_CHUNK]->(b:Chunk) WITH a, b ORDER BY a.id, b.id
  RETURN collect([a.id, b.id]) AS next_links
}
CALL () { MATCH (s:Source) WITH s ORDER BY s.name RETURN collect(s.name) AS sources }
CALL () { MATCH (k:Corpus) WITH k ORDER BY k.name RETURN collect([k.name, k.files]) AS corpora }
CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
RETURN documents, chunks, next_links, sources, corpora, relationships
"""


def snapshot(driver, database: str) -> dict:
    records, _, _ = driver.execute_query(SNAPSHOT, database_=database)
    return dict(records[0])


# Every node and relationship with every property: nodes known by their labels and id (or name),
# relationships by their type and ends. Embeddings are returned apart, to compare within a tolerance
# (a batch of other texts may change a vector's last bits); `revision` (the corpus's change counter,
# which counts transactions) and times of day are left out.
def whole_graph(driver, database: str,
                volatile: tuple[str, ...] = ("revision", "created_at", "updated_at")) -> dict:
    """{'nodes': sorted [labels, key, props]}, 'relationships': sorted [type, from, to, props],
    'embeddings': {chunk id: vector}} of the whole database."""
    def props(values: dict) -> list:
        return sorted([k, repr(v)] for k, v in values.items() if k not in volatile and k != "embedding")

    nodes, _, _ = driver.execute_query(
        "MATCH (n) RETURN labels(n) AS labels, coalesce(n.id, n.name) AS key, properties(n) AS props",
        database_=database)
    rels, _, _ = driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN type(r) AS type, coalesce(a.id, a.name) AS from, coalesce(b.id, b.name) AS to, "
        "properties(r) AS props", database_=database)
    return {
        "nodes": sorted([sorted(r["labels"]), r["key"], props(r["props"])] for r in nodes),
        "relationships": sorted([r["type"], r["from"], r["to"], props(r["props"])] for r in rels),
        "embeddings": {r["key"]: r["props"]["embedding"] for r in nodes if "embedding" in r["props"]},
    }
