tiles @FILE --entry avg_min_odd --grad
