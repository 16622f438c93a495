module b2frame

go 1.19
