DROP TABLE metric_moves;
