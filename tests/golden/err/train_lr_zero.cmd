train @FILE --entry mlp_digits --steps 2 --lr 0
