// Server version, edition and the Cypher versions it speaks.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions, edition
