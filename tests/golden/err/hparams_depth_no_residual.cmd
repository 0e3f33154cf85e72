hparams @FILE --entry plain_stack --width D=8 --depth L=2
