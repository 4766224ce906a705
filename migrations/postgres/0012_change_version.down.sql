DROP TABLE change_version;
