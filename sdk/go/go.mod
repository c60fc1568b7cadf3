module github.com/klaxon/klaxon-go

go 1.21
