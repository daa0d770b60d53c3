// The files ingested into corpus $name (no row if there is no such corpus).
MATCH (k:Corpus {name: $name})
RETURN k.files AS files
