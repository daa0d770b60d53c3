// The fulltext indexes in the database, with the labels they cover.
SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes
RETURN name, labelsOrTypes AS labels
