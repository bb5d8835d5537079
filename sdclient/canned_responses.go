package sdclient

// CannedResponsesService reads canned responses (GET /canned_responses):
// List and ListAll of CannedResponse with ListOptions (crud.go).
type CannedResponsesService struct {
	listing[CannedResponse, ListOptions, *ListOptions]
}
