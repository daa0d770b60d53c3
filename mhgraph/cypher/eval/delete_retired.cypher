// Retired chunks, claims and names (graph/documents.py) that no evaluation trace reaches any more.
MATCH (n:Retired) WHERE NOT EXISTS { (n)--() }
DETACH DELETE n
