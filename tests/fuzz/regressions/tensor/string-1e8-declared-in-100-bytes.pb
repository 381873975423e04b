€Â×/2
aaaaaaaaaa