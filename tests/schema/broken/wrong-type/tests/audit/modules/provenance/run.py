print("scan")
