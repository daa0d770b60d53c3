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
