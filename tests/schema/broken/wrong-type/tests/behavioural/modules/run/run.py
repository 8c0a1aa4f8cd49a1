print("run")
