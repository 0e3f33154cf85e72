namespace Model

def f := 1

end Modle
