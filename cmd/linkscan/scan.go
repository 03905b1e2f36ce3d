package main

var cmdScan = &command{
	Name:      "scan",
	UsageLine: "linkscan scan [flags] PATH...",
	Short:     "report every link in archives",
	Long:      `Scan is being built; see the open issues.`,
}

func init() {
	cmdScan.Run = func(e *env, args []string) int { return exitUsage }
}
