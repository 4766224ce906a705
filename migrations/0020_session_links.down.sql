DROP INDEX session_links_user;
DROP TABLE session_links;
