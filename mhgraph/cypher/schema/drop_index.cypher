// Drop an index by name (a parameter); nothing happens if it does not exist.
DROP INDEX $name IF EXISTS
