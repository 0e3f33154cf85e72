def f := 1
end
