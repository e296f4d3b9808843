module github.com/fsmine/fsmine

go 1.26.8

require (
	github.com/disintegration/imaging v1.6.2
	github.com/emicklei/dot v1.6.2
	github.com/fogleman/gg v1.3.0
	github.com/goccy/go-json v0.12.0
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/tetratelabs/wazero v1.10.1
	golang.org/x/image v0.25.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.23.0 // indirect
	golang.org/x/tools v0.30.0 // indirect
)
